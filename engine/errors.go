package engine

import (
	"errors"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine/internal/notfound"
)

// ErrNotFound is wrapped by what a host returns for data that does not
// exist: the lookups of eval.Lookup (a context entry's ConfigMap, API
// call or global context entry; a mutate target) and the data sources of
// the CEL libraries (kyvernocel.Sources: resource.Get gives null, as in
// Kyverno).
var ErrNotFound = notfound.Err

// Code is a stable, machine-readable error class. Clients and tests match on
// the code, never on the message text.
type Code string

const (
	// CodeDecode: the document is not valid YAML/JSON or has the wrong shape
	// (unknown field, wrong type).
	CodeDecode Code = "decode_error"
	// CodeInvalidPolicy: the policy decodes but breaks a rule of the policy
	// language (missing field, conflicting fields, bad value).
	CodeInvalidPolicy Code = "invalid_policy"
	// CodeInvalidVariable: a {{ }} variable or JMESPath expression does not
	// parse, or calls an unknown function or with the wrong arity.
	CodeInvalidVariable Code = "invalid_variable"
	// CodeInvalidPattern: a validate pattern holds an anchor or operator that
	// does not parse.
	CodeInvalidPattern Code = "invalid_pattern"
	// CodeBackgroundUserInfo: a background policy refers to request.userInfo,
	// roles, clusterRoles or subjects, which do not exist in background scans.
	CodeBackgroundUserInfo Code = "background_userinfo"
	// CodeUnsupported: a feature of the policy language this engine does not
	// evaluate yet.
	CodeUnsupported Code = "unsupported"
	// CodeVariableNotResolved: at evaluation, a variable could not be resolved.
	CodeVariableNotResolved Code = "variable_not_resolved"
	// CodeEvaluation: any other evaluation failure (bad operand types, a
	// JMESPath function error, a failed context lookup).
	CodeEvaluation Code = "evaluation_error"
	// CodeBudgetExceeded: the evaluation took more steps than its budget
	// (eval.Options.MaxSteps, see Budget): a policy and resource that ask
	// for too much work. The rule being evaluated reports an error.
	CodeBudgetExceeded Code = "budget_exceeded"
	// CodeCanceled: the evaluation's context was canceled or its deadline
	// passed, and the evaluation stopped; Err is the context's error
	// (context.Canceled or context.DeadlineExceeded).
	CodeCanceled Code = "canceled"
)

// Error is an engine error: a stable Code, a Path and a human Message.
//
// Path points into the policy for compile errors
// ("spec.rules[2].validate.pattern.spec.containers") and into the resource
// or context for evaluation errors.
type Error struct {
	Code    Code
	Path    string
	Message string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf is a shorthand for an *Error without a cause.
func Errorf(code Code, path, message string) *Error {
	return &Error{Code: code, Path: path, Message: message}
}

// Errors is a list of errors, sorted by Path by Sort. Compile returns every
// problem it finds, not only the first.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Sort orders the errors by Path, then Code, keeping the original order of
// equal entries.
func (es Errors) Sort() {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Path != es[j].Path {
			return es[i].Path < es[j].Path
		}
		return es[i].Code < es[j].Code
	})
}

// Err returns nil for an empty list and the list itself otherwise, so that
// callers can write `return errs.Err()`.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	es.Sort()
	return es
}

// As returns every *Error found in err: the error itself, the members of an
// Errors list, or the errors it wraps.
func As(err error) []*Error {
	if err == nil {
		return nil
	}
	var list Errors
	if errors.As(err, &list) {
		return list
	}
	var one *Error
	if errors.As(err, &one) {
		return []*Error{one}
	}
	return nil
}
