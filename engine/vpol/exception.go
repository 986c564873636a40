package vpol

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/cel-go/cel"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// LabelExceptionPriority orders the exceptions that apply to a resource:
// the one with the highest priority (a positive integer) decides
// reportResult (Kyverno's polex.kyverno.io/priority).
const LabelExceptionPriority = "polex.kyverno.io/priority"

// Exception is a compiled policies.kyverno.io PolicyException. It is
// immutable and safe for concurrent use.
type Exception struct {
	doc *ExceptionDocument
	// Key is namespace/name, or name without namespace (Kyverno's
	// MetaNamespaceKeyFunc), as results name the exception.
	Key             string
	matchConditions []cel.Program
	priority        int
	expiresAt       *time.Time
}

// Document returns the exception as written. Callers must not modify it.
func (e *Exception) Document() *ExceptionDocument { return e.doc }

// AppliesTo reports whether the exception names the policy (by name and
// kind) in spec.policyRefs.
func (e *Exception) AppliesTo(kind, name string) bool {
	for _, r := range e.doc.Spec.PolicyRefs {
		if r.Name == name && r.Kind == kind {
			return true
		}
	}
	return false
}

// Expired reports whether spec.expiresAt is before now.
func (e *Exception) Expired(now time.Time) bool {
	return e.expiresAt != nil && now.After(*e.expiresAt)
}

// exempts reports whether the exception exempts a resource it matches
// from the whole policy (it lists no images and no allowed values, which
// would only be handed to the policy's expressions).
func (e *Exception) exempts() bool {
	return len(e.doc.Spec.Images) == 0 && len(e.doc.Spec.AllowedValues) == 0
}

// CompileException checks an exception and compiles its match conditions
// (in the environment of a cluster-scoped policy: Kyverno compiles them
// in each policy's environment, which differs only for the resource
// library of namespaced policies and for `variables`, which match
// conditions cannot read anyway).
func CompileException(doc *ExceptionDocument) (*Exception, error) {
	c := &compiler{}
	e := &Exception{doc: doc, Key: doc.Metadata.Name}
	if doc.Metadata.Namespace != "" {
		e.Key = doc.Metadata.Namespace + "/" + doc.Metadata.Name
	}
	if doc.Metadata.Name == "" {
		c.errorf(engine.CodeInvalidPolicy, "metadata.name", "an exception needs a name")
	}
	if len(doc.Spec.PolicyRefs) == 0 {
		c.errorf(engine.CodeInvalidPolicy, "spec.policyRefs", "must specify at least one policy ref")
	}
	for i, r := range doc.Spec.PolicyRefs {
		if r.Name == "" {
			c.errorf(engine.CodeInvalidPolicy, fmt.Sprintf("spec.policyRefs[%d].name", i), "must specify policy name")
		}
		if r.Kind == "" {
			c.errorf(engine.CodeInvalidPolicy, fmt.Sprintf("spec.policyRefs[%d].kind", i), "must specify policy kind")
		}
	}
	switch doc.Spec.ReportResult {
	case "", "skip", "pass":
	default:
		c.errorf(engine.CodeInvalidPolicy, "spec.reportResult", "unknown report result %q (want skip or pass)", doc.Spec.ReportResult)
	}
	if v, ok := doc.Metadata.Labels[LabelExceptionPriority]; ok {
		if p, err := strconv.Atoi(v); err == nil {
			e.priority = p
		}
	}
	if doc.Spec.ExpiresAt != nil {
		t := doc.Spec.ExpiresAt.Time
		e.expiresAt = &t
	}
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		return nil, fmt.Errorf("compile PolicyException %q: %w", doc.Metadata.Name, err)
	}
	for i, m := range doc.Spec.MatchConditions {
		path := fmt.Sprintf("spec.matchConditions[%d]", i)
		if m.Name == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".name", "a match condition needs a name")
		}
		if m.Expression == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".expression", "a match condition needs an expression")
			continue
		}
		e.matchConditions = append(e.matchConditions, c.compile(env, m.Name, m.Expression, path+".expression", cel.BoolType).prog)
	}
	if err := c.Errs.Err(); err != nil {
		return nil, fmt.Errorf("compile PolicyException %q: %w", doc.Metadata.Name, err)
	}
	return e, nil
}

// Matches evaluates the exception's match conditions on act, as the
// policies of the group do (errors joined; no failure policy), for the
// other kinds of the group (engine/mpol).
func (e *Exception) Matches(ctx context.Context, act *kyvernocel.Activation) (bool, error) {
	return MatchConditions(ctx, act, e.matchConditions, false)
}

// Exempts reports whether the exception exempts a resource it matches
// from the whole policy: it lists no images and no allowed values.
func (e *Exception) Exempts() bool { return e.exempts() }

// ExceptionResult is the result of a resource the exceptions matched
// exempt (rule RuleException; skip, or pass by the reportResult of the one
// with the highest priority).
func ExceptionResult(matched []*Exception) Result { return exceptionResult(matched) }
