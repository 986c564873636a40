package celrule

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine"
)

// This file compiles the expressions of a Kubernetes
// ValidatingAdmissionPolicy (engine/vap) into a Rule: Kyverno runs them
// through the same Kubernetes compiler and validator as validate.cel
// (pkg/admissionpolicy), with authorizer absent and the failure policy of
// the policy.

// AdmissionSpec are the expressions of a ValidatingAdmissionPolicy.
type AdmissionSpec struct {
	MatchConditions  []NamedExpression
	Variables        []NamedExpression
	Validations      []Validation
	AuditAnnotations []AuditAnnotation
	// HasParams declares params: the policy has a paramKind.
	HasParams bool
}

// NamedExpression is a match condition or a variable (of a
// ValidatingAdmissionPolicy, or of validate.cel and its preconditions).
type NamedExpression struct {
	Name, Expression string
}

// Validation is one validation: its expression, the message of a false
// result and the expression of that message.
type Validation struct {
	Expression, Message, MessageExpression string
}

// AuditAnnotation is one audit annotation.
type AuditAnnotation struct {
	Key, ValueExpression string
}

// CompileAdmission compiles the expressions of a ValidatingAdmissionPolicy
// as Kyverno does: Kubernetes' environment with Kyverno's orValue, object,
// oldObject, request, namespaceObject, variables and, with HasParams,
// params; authorizer is not declared (Kyverno's CLI and background scans
// have none). Unlike Compile, an expression that does not compile or has
// the wrong type (a validation that is not bool) is an error here, with
// Kubernetes' message: every one is reported, Code
// engine.CodeInvalidPolicy, at its field below path
// ("spec.validations[0].expression", "spec.variables[1].expression",
// "spec.matchConditions[0].expression",
// "spec.validations[2].messageExpression",
// "spec.auditAnnotations[0].valueExpression").
func CompileAdmission(spec AdmissionSpec, path string) (*Rule, error) {
	parts := ruleParts{conditions: spec.MatchConditions, variables: spec.Variables, validations: spec.Validations}
	for _, a := range spec.AuditAnnotations {
		parts.annotations = append(parts.annotations, a.ValueExpression)
	}
	r := &Rule{}
	if err := r.compileParts(parts, spec.HasParams, false, false); err != nil {
		return nil, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path, Message: err.Error(), Err: err}
	}
	var errs engine.Errors
	report := func(c *compiled, field string) {
		if c != nil && c.err != nil {
			errs = append(errs, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path + "." + field, Message: c.err.Error(), Err: c.err})
		}
	}
	for i, v := range r.variables {
		report(&v.compiled, fmt.Sprintf("variables[%d].expression", i))
	}
	for i, c := range r.preconditions {
		report(&c.compiled, fmt.Sprintf("matchConditions[%d].expression", i))
	}
	for i, v := range r.validations {
		report(&v.compiled, fmt.Sprintf("validations[%d].expression", i))
		report(v.messageExpr, fmt.Sprintf("validations[%d].messageExpression", i))
	}
	for i, a := range r.annotations {
		report(a, fmt.Sprintf("auditAnnotations[%d].valueExpression", i))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// NewAdmissionInput is NewInput for a ValidatingAdmissionPolicy: object
// without old object, namespaceObject ns as given (nil: null; such a
// policy sees the Namespace Kyverno builds for it, engine/vap, which
// differs from validate.cel's), no authorizer.
func NewAdmissionInput(req Request, object, ns map[string]any) *Input {
	in := newInput(req, object, nil, nil)
	in.namespace = ns
	return in
}
