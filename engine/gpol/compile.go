package gpol

import (
	"fmt"

	"github.com/google/cel-go/cel"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Policy is a compiled GeneratingPolicy or NamespacedGeneratingPolicy. It
// is immutable and safe for concurrent use.
type Policy struct {
	doc *Document

	// Kind is GeneratingPolicy or NamespacedGeneratingPolicy, Name its
	// metadata.name, Namespace the metadata.namespace of a
	// NamespacedGeneratingPolicy ("" for a GeneratingPolicy).
	Kind, Name, Namespace string
	// Hash is the SHA-256 of the policy's kind, name, namespace,
	// annotations and spec, hex encoded (vpol.Hash).
	Hash string
	// Admission is spec.evaluation.admission.enabled (default true);
	// GenerateExisting, Synchronize and OrphanDownstream are
	// spec.evaluation.generateExisting.enabled,
	// spec.evaluation.synchronize.enabled and
	// spec.evaluation.orphanDownstreamOnPolicyDelete.enabled (default
	// false); UseServerSideApply is spec.useServerSideApply.
	Admission, GenerateExisting, Synchronize, OrphanDownstream, UseServerSideApply bool

	match *vpol.Matcher
	// The compiled expressions, in the order they run.
	matchConditions []cel.Program
	variables       []*expr
	generations     []*expr
	auditAnnots     vpol.AuditAnnotations
}

// expr is a compiled expression with its name (a variable's, a match
// condition's, an audit annotation's key) or, for a generation, the path
// of its field.
type expr struct {
	name string
	prog cel.Program
	// tpl is a generation's template (prog is then nil).
	tpl *template
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// DropsUnmatched reports whether Kyverno's CLI drops the response of the
// policy for a resource it does not match (see vpol.Matcher).
func (p *Policy) DropsUnmatched() bool { return p.match.DropsUnmatched() }

// Compile checks doc and compiles it as Kyverno's gpol compiler does:
// every expression once, in the policy's generating CEL environment
// (kyvernocel.NewGeneratingEnv). Match conditions must be bool, audit
// annotations a string or null; generations may be of any type (they run
// for generator.Apply's effect); a generation template's YAML parses and
// its placeholders compile (template.go). It returns every problem found,
// as engine.Errors sorted by path (Code engine.CodeInvalidPolicy).
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
		doc:                doc,
		Admission:          spec.AdmissionEnabled(),
		GenerateExisting:   spec.GenerateExistingEnabled(),
		Synchronize:        spec.SynchronizationEnabled(),
		OrphanDownstream:   spec.OrphanDownstreamOnPolicyDeleteEnabled(),
		UseServerSideApply: spec.UseServerSideApply,
		match:              vpol.CompileMatcher(spec.MatchConstraints),
	}
	p.Kind, p.Name, p.Namespace, p.Hash = doc.Identity()
	c.checkPolicy(p)
	env, err := kyvernocel.NewGeneratingEnv(p.Namespace)
	if err != nil {
		c.Wrap("spec", err)
		return p
	}
	c.expressions(env, p, spec)
	return p
}

// checkPolicy reports what Kyverno's policy validation and the CRD refuse
// that decoding does not (it checks types only).
func (c *compiler) checkPolicy(p *Policy) {
	doc, spec := p.doc, &p.doc.Spec
	c.Common(doc.Kind, &doc.Metadata, doc.Namespaced(), spec.MatchConstraints, "matchConditions", spec.MatchConditions, spec.Variables, spec.AuditAnnotations)
	if len(spec.Generation) == 0 {
		c.Invalid("spec.generate", "a policy needs at least one generation")
	}
	for i, g := range spec.Generation {
		path := fmt.Sprintf("spec.generate[%d]", i)
		switch {
		case g.Template != nil && g.Expression != "":
			c.Invalid(path, "only one of expression or template may be set")
		case g.Template != nil: // compiled with the expressions
		case g.Expression == "":
			c.Invalid(path, "one of expression or template must be set")
		}
	}
}

// expressions compiles the expressions as Kyverno's gpol compiler does:
// match conditions, variables (each registered with its type for the
// expressions after it), generations and audit annotations.
func (c *compiler) expressions(env *kyvernocel.Env, p *Policy, spec *policiesv1.GeneratingPolicySpec) {
	for i, m := range spec.MatchConditions {
		prog, _ := c.Expression(env, m.Expression, fmt.Sprintf("spec.matchConditions[%d].expression", i), cel.BoolType)
		p.matchConditions = append(p.matchConditions, prog)
	}
	for i, vr := range spec.Variables {
		prog, t := c.Expression(env, vr.Expression, fmt.Sprintf("spec.variables[%d].expression", i))
		env.RegisterVariable(vr.Name, t)
		p.variables = append(p.variables, &expr{name: vr.Name, prog: prog})
	}
	for i, g := range spec.Generation {
		if g.Template != nil && g.Expression == "" {
			path := fmt.Sprintf("spec.generate[%d].template.value", i)
			tpl, err := compileTemplate(env, g.Template)
			if err != nil {
				c.Invalid(path, "%v", err)
				continue
			}
			p.generations = append(p.generations, &expr{name: path, tpl: tpl})
			continue
		}
		if g.Expression == "" || g.Template != nil {
			continue // reported by checkPolicy
		}
		path := fmt.Sprintf("spec.generate[%d].expression", i)
		prog, _ := c.Expression(env, g.Expression, path)
		p.generations = append(p.generations, &expr{name: path, prog: prog})
	}
	for i, a := range spec.AuditAnnotations {
		prog, _ := c.Expression(env, a.ValueExpression, fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), cel.StringType, cel.NullType)
		p.auditAnnots.Add(a.Key, prog)
	}
}
