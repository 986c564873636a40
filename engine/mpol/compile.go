package mpol

import (
	"fmt"

	"github.com/google/cel-go/cel"
	celcommon "github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/parser"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// The reinvocation policies.
const (
	ReinvocationNever    = string(admissionregistrationv1.NeverReinvocationPolicy)
	ReinvocationIfNeeded = string(admissionregistrationv1.IfNeededReinvocationPolicy)
)

// Policy is a compiled MutatingPolicy or NamespacedMutatingPolicy. It is
// immutable and safe for concurrent use.
type Policy struct {
	doc *Document

	// Kind is MutatingPolicy or NamespacedMutatingPolicy, Name its
	// metadata.name, Namespace the metadata.namespace of a
	// NamespacedMutatingPolicy ("" for a MutatingPolicy).
	Kind, Name, Namespace string
	// Hash is the SHA-256 of the policy's kind, name, namespace,
	// annotations and spec, hex encoded (vpol.Hash).
	Hash string
	// Admission, Background and MutateExisting are
	// spec.evaluation.admission.enabled, spec.evaluation.background.enabled
	// (default true) and spec.evaluation.mutateExisting.enabled (default
	// false).
	Admission, Background, MutateExisting bool
	// FailurePolicyIgnore is spec.failurePolicy: Ignore (default Fail).
	FailurePolicyIgnore bool
	// Reinvocation is spec.reinvocationPolicy: ReinvocationNever (default)
	// or ReinvocationIfNeeded.
	Reinvocation string

	variants []*Variant
	targets  *targets // of a policy with mutateExisting (target.go)
}

// Variant is one of the policies Kyverno makes of a MutatingPolicy: the
// policy as written, then its variants for pod controllers (autogen.go),
// each evaluated as a policy of its own (with the policy's name) on the
// object the ones before it mutated.
type Variant struct {
	// Autogen names the autogen configuration of a variant
	// (vpol.AutogenDefaults, vpol.AutogenCronJobs), and Targets its
	// controllers; both are empty for the policy as written.
	Autogen string
	Targets []vpol.Target

	prefix string // of the paths of its fields in errors
	spec   *policiesv1.MutatingPolicySpec
	match  *vpol.Matcher
	// The compiled expressions, in the order they run.
	variables       []*expr
	matchConditions []cel.Program
	mutations       []*mutation
	auditAnnots     vpol.AuditAnnotations
}

// MatchConstraints returns the variant's spec.matchConstraints (the pod
// controllers' for an autogen variant). Callers must not modify it.
func (v *Variant) MatchConstraints() *admissionregistrationv1.MatchResources {
	return v.spec.MatchConstraints
}

// DropsUnmatched reports whether Kyverno's CLI drops the response of this
// variant for a resource it does not match (see vpol.Matcher).
func (v *Variant) DropsUnmatched() bool { return v.match.DropsUnmatched() }

// expr is a compiled expression with its name (a variable's, a match
// condition's, an audit annotation's key).
type expr struct {
	name string
	prog cel.Program
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// Variants returns the policy as written followed by its autogen
// variants, in the order they run. Callers must not modify them.
func (p *Policy) Variants() []*Variant { return p.variants }

// Compile checks doc and compiles it as Kyverno's mpol compiler does:
// every expression once, in the policy's mutating CEL environment
// (kyvernocel.NewMutatingEnv), the autogen variants for pod controllers
// too. Match conditions must be bool, ApplyConfiguration expressions an
// Object, JSONPatch expressions a list of JSONPatch, audit annotations a
// string or null. It returns every problem found, as engine.Errors sorted
// by path (Code engine.CodeInvalidPolicy); the path of a problem of an
// autogen variant starts with "autogen[<configuration>]".
func Compile(doc *Document) (*Policy, error) {
	var c compiler
	return vpol.Compiled(c.policy(doc), &c.Problems, doc.Kind, doc.Metadata.Name)
}

type compiler struct {
	vpol.Problems
}

func (c *compiler) policy(doc *Document) *Policy {
	spec := &doc.Spec
	p := &Policy{
		doc:            doc,
		Admission:      spec.AdmissionEnabled(),
		Background:     spec.BackgroundEnabled(),
		MutateExisting: spec.MutateExistingEnabled(),
		Reinvocation:   string(spec.GetReinvocationPolicy()),
	}
	p.Kind, p.Name, p.Namespace, p.Hash = doc.Identity()
	c.checkPolicy(p)
	env, err := kyvernocel.NewMutatingEnv(p.Namespace)
	if err != nil {
		c.Wrap("spec", err)
		return p
	}
	p.variants = append(p.variants, c.variant(env, spec, "", nil, ""))
	if p.MutateExisting {
		c.compileTargets(env, p) // with the variables of the policy as written
	}
	if len(c.Errs) > 0 {
		return p // the variants would repeat the policy's problems
	}
	for _, g := range autogen(spec) {
		p.variants = append(p.variants, c.variant(env, g.spec, g.config, g.targets, "autogen["+g.config+"]."))
	}
	return p
}

// checkPolicy reports what Kyverno's policy validation and the CRD refuse
// that decoding does not (it checks types only).
func (c *compiler) checkPolicy(p *Policy) {
	doc, spec := p.doc, &p.doc.Spec
	c.Common(doc.Kind, &doc.Metadata, doc.Namespaced(), spec.MatchConstraints, "matchConditions", spec.MatchConditions, spec.Variables, spec.AuditAnnotations)
	if !p.Admission && !p.MutateExisting {
		c.Invalid("spec.evaluation", "disabling both admission and mutateExisting evaluation modes is not allowed")
	}
	p.FailurePolicyIgnore = c.FailurePolicy(spec.FailurePolicy)
	if p.Reinvocation != ReinvocationNever && p.Reinvocation != ReinvocationIfNeeded {
		c.Invalid("spec.reinvocationPolicy", "unknown reinvocation policy %q (want Never or IfNeeded)", p.Reinvocation)
	}
	if spec.GenerateMutatingAdmissionPolicyEnabled() {
		for i, m := range spec.MatchConditions {
			if readsVariables(m.Expression) {
				c.Invalid(fmt.Sprintf("spec.matchConditions[%d].expression", i), "variables cannot be referenced in matchConditions when spec.autogen.mutatingAdmissionPolicy.enabled is true; native MutatingAdmissionPolicy evaluates match conditions before variables, so inline the expression instead")
			}
		}
	}
	if len(spec.Mutations) == 0 {
		c.Invalid("spec.mutations", "a policy needs at least one mutation")
	}
	for i, m := range spec.Mutations {
		path := fmt.Sprintf("spec.mutations[%d]", i)
		switch {
		case m.PatchType == PatchTypeApplyConfiguration && (m.ApplyConfiguration == nil || m.ApplyConfiguration.Expression == ""):
			c.Invalid(path+".applyConfiguration.expression", "an ApplyConfiguration mutation needs an expression")
		case m.PatchType == PatchTypeJSONPatch && (m.JSONPatch == nil || m.JSONPatch.Expression == ""):
			c.Invalid(path+".jsonPatch.expression", "a JSONPatch mutation needs an expression")
		case m.PatchType != PatchTypeApplyConfiguration && m.PatchType != PatchTypeJSONPatch:
			c.Invalid(path+".patchType", "unknown patch type %q (want ApplyConfiguration or JSONPatch)", m.PatchType)
		}
	}
}

// variant compiles one spec as Kyverno's mpol compiler does: variables
// (each registered with its type for the expressions after it), match
// conditions (which may read the variables), mutations and audit
// annotations.
func (c *compiler) variant(env *kyvernocel.Env, spec *policiesv1.MutatingPolicySpec, config string, targets []vpol.Target, prefix string) *Variant {
	v := &Variant{Autogen: config, Targets: targets, prefix: prefix, spec: spec, match: vpol.CompileMatcher(spec.MatchConstraints)}
	for i, vr := range spec.Variables {
		prog, t := c.expression(env, vr.Expression, fmt.Sprintf("%sspec.variables[%d].expression", prefix, i))
		env.RegisterVariable(vr.Name, t)
		v.variables = append(v.variables, &expr{name: vr.Name, prog: prog})
	}
	for i, m := range spec.MatchConditions {
		prog, _ := c.expression(env, m.Expression, fmt.Sprintf("%sspec.matchConditions[%d].expression", prefix, i), cel.BoolType)
		v.matchConditions = append(v.matchConditions, prog)
	}
	allowAtomic := spec.EvaluationConfiguration != nil && spec.EvaluationConfiguration.UseServerSideApply
	for i, m := range spec.Mutations {
		mu := &mutation{patchType: string(m.PatchType), allowAtomic: allowAtomic}
		switch {
		case mu.patchType == PatchTypeJSONPatch && m.JSONPatch != nil:
			mu.path = fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i)
			mu.prog, _ = c.expression(env, m.JSONPatch.Expression, prefix+mu.path, cel.ListType(kyvernocel.JSONPatchType))
		case mu.patchType == PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			mu.path = fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i)
			mu.prog, _ = c.expression(env, m.ApplyConfiguration.Expression, prefix+mu.path, kyvernocel.ObjectType)
		default:
			continue // reported by checkPolicy
		}
		v.mutations = append(v.mutations, mu)
	}
	for i, a := range spec.AuditAnnotations {
		prog, _ := c.expression(env, a.ValueExpression, fmt.Sprintf("%sspec.auditAnnotations[%d].valueExpression", prefix, i), cel.StringType, cel.NullType)
		v.auditAnnots.Add(a.Key, prog)
	}
	return v
}

// expression compiles one expression whose type must be one of want,
// and returns it with its type (dyn when it does not compile, so that the
// expressions that use a variable report their own problems only).
func (c *compiler) expression(env *kyvernocel.Env, text, path string, want ...*cel.Type) (cel.Program, *cel.Type) {
	if text == "" {
		return nil, cel.DynType // reported by checkPolicy
	}
	prog, t, err := vpol.CompileExpression(env, text, path, want...)
	if err != nil {
		c.Errs = append(c.Errs, err)
	}
	return prog, t
}

// readsVariables reports whether an expression names `variables` (one that
// does not parse reads nothing: compiling reports it).
func readsVariables(expression string) bool {
	prs, err := parser.NewParser()
	if err != nil {
		return false
	}
	parsed, iss := prs.Parse(celcommon.NewStringSource(expression, "matchCondition"))
	if iss != nil && len(iss.GetErrors()) > 0 {
		return false
	}
	found := false
	celast.PreOrderVisit(parsed.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.IdentKind && e.AsIdent() == kyvernocel.VarVariables {
			found = true
		}
	}))
	return found
}
