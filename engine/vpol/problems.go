package vpol

import (
	"fmt"
	"slices"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Problems collects what is wrong with a policy of the group while it
// compiles, for the other kinds (engine/gpol, engine/dpol): every problem
// is an *engine.Error with its path.
type Problems struct {
	Errs engine.Errors
}

// Invalid records a problem of Code engine.CodeInvalidPolicy at path.
func (p *Problems) Invalid(path, format string, args ...any) {
	p.Errs = append(p.Errs, engine.Errorf(engine.CodeInvalidPolicy, path, fmt.Sprintf(format, args...)))
}

// Expression compiles one expression at path whose type must be one of
// want (CompileExpression), records its problem, and returns it with its
// type (dyn when it does not compile, so that the expressions that use a
// variable report their own problems only). An empty text compiles to
// nothing: the caller reports it where the field is required.
func (p *Problems) Expression(env *kyvernocel.Env, text, path string, want ...*cel.Type) (cel.Program, *cel.Type) {
	if text == "" {
		return nil, cel.DynType
	}
	prog, t, err := CompileExpression(env, text, path, want...)
	if err != nil {
		p.Errs = append(p.Errs, err)
	}
	return prog, t
}

// Wrap records err at path: a failure of what compiling needs (the CEL
// environment, the autogen variants), kept as the Error's Err.
func (p *Problems) Wrap(path string, err error) {
	p.Errs = append(p.Errs, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path, Message: err.Error(), Err: err})
}

// Compiled is the result of the group's Compile functions: the policy
// when probs holds no problem, else nil and every problem of the policy
// kind/name (Problems.Err).
func Compiled[P any](p *P, probs *Problems, kind, name string) (*P, error) {
	if err := probs.Err(kind, name); err != nil {
		return nil, err
	}
	return p, nil
}

// Err is nil without problems, else every problem (sorted by path) of the
// policy kind/name.
func (p *Problems) Err(kind, name string) error {
	if len(p.Errs) == 0 {
		return nil
	}
	return fmt.Errorf("compile %s %q: %w", kind, name, p.Errs.Err())
}

// Common records what every kind of the group requires: a name, a
// namespace for a namespaced kind, a matchConstraints with a resource
// rule, a name and an expression for each condition (at
// spec.<condList>[i]) and variable, a key for each audit annotation.
func (p *Problems) Common(kind string, md *metav1.ObjectMeta, namespaced bool, mc *admissionregistrationv1.MatchResources, condList string, conds []admissionregistrationv1.MatchCondition, vars []admissionregistrationv1.Variable, annots []admissionregistrationv1.AuditAnnotation) {
	p.Identity(kind, md, namespaced)
	p.MatchConstraints(mc)
	named := func(list string, i int, name, expression string) {
		if name == "" {
			p.Invalid(fmt.Sprintf("spec.%s[%d].name", list, i), "a name is required")
		}
		if expression == "" {
			p.Invalid(fmt.Sprintf("spec.%s[%d].expression", list, i), "an expression is required")
		}
	}
	for i, c := range conds {
		named(condList, i, c.Name, c.Expression)
	}
	for i, v := range vars {
		named("variables", i, v.Name, v.Expression)
	}
	for i, a := range annots {
		if a.Key == "" {
			p.Invalid(fmt.Sprintf("spec.auditAnnotations[%d].key", i), "an audit annotation needs a key")
		}
	}
}

// Identity records a policy without a name, and a policy of a namespaced
// kind without a namespace.
func (p *Problems) Identity(kind string, md *metav1.ObjectMeta, namespaced bool) {
	if md.Name == "" {
		p.Invalid("metadata.name", "a policy needs a name")
	}
	if namespaced && md.Namespace == "" {
		p.Invalid("metadata.namespace", "a %s needs a namespace", kind)
	}
}

// MatchConstraints records a spec.matchConstraints without a resource rule.
func (p *Problems) MatchConstraints(mc *admissionregistrationv1.MatchResources) {
	if mc == nil || len(mc.ResourceRules) == 0 {
		p.Invalid("spec.matchConstraints", "a matchConstraints with at least one resource rule is required")
	}
}

// Actions returns spec.validationActions without repeats, in their order,
// and records each action other than Deny, Warn and Audit.
func (p *Problems) Actions(actions []admissionregistrationv1.ValidationAction) []string {
	var out []string
	for i, a := range actions {
		switch string(a) {
		case ActionDeny, ActionWarn, ActionAudit:
			if !slices.Contains(out, string(a)) {
				out = append(out, string(a))
			}
		default:
			p.Invalid(fmt.Sprintf("spec.validationActions[%d]", i), "unknown validation action %q (want Deny, Warn or Audit)", a)
		}
	}
	return out
}

// FailurePolicy reports whether spec.failurePolicy fp is Ignore
// (FailurePolicyIgnore) and records a value other than Fail and Ignore.
func (p *Problems) FailurePolicy(fp *admissionregistrationv1.FailurePolicyType) bool {
	ignore, err := FailurePolicyIgnore(fp)
	if err != nil {
		p.Errs = append(p.Errs, err)
	}
	return ignore
}

// FailurePolicyIgnore reports whether spec.failurePolicy fp is Ignore (nil
// is Fail); a value other than Fail and Ignore is an error of Code
// engine.CodeInvalidPolicy at "spec.failurePolicy".
func FailurePolicyIgnore(fp *admissionregistrationv1.FailurePolicyType) (bool, *engine.Error) {
	if fp == nil {
		return false, nil
	}
	switch *fp {
	case admissionregistrationv1.Fail:
		return false, nil
	case admissionregistrationv1.Ignore:
		return true, nil
	}
	return false, engine.Errorf(engine.CodeInvalidPolicy, "spec.failurePolicy", fmt.Sprintf("unknown failure policy %q (want Fail or Ignore)", *fp))
}
