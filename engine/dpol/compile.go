package dpol

import (
	"context"
	"fmt"

	"github.com/aptible/supercronic/cronexpr"
	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Policy is a compiled DeletingPolicy or NamespacedDeletingPolicy. It is
// immutable and safe for concurrent use.
type Policy struct {
	doc *Document

	// Kind is DeletingPolicy or NamespacedDeletingPolicy, Name its
	// metadata.name, Namespace the metadata.namespace of a
	// NamespacedDeletingPolicy ("" for a DeletingPolicy).
	Kind, Name, Namespace string
	// Hash is the SHA-256 of the policy's kind, name, namespace,
	// annotations and spec, hex encoded (vpol.Hash).
	Hash string
	// Schedule is spec.schedule, parsed (a cron expression).
	Schedule *cronexpr.Expression
	// Propagation is spec.deletionPropagationPolicy ("" when unset: the
	// API server's default for the kind).
	Propagation metav1.DeletionPropagation

	match      *vpol.Matcher
	variables  []*expr
	conditions []cel.Program
}

type expr struct {
	name string
	prog cel.Program
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// Compile checks doc and compiles it as Kyverno's dpol compiler and
// policy validation do: spec.schedule must be a cron expression
// (a schedule that does not parse is an error at spec.schedule), the
// matchConstraints need a resource rule, the variables and conditions
// compile in the policy's CEL environment (kyvernocel.NewEnv), the
// conditions as bool. It returns every problem found, as engine.Errors
// sorted by path (Code engine.CodeInvalidPolicy).
func Compile(doc *Document) (*Policy, error) {
	var probs vpol.Problems
	invalid := probs.Invalid
	spec := &doc.Spec
	p := &Policy{
		doc:   doc,
		match: vpol.CompileMatcher(allOperations(spec.MatchConstraints)),
	}
	p.Kind, p.Name, p.Namespace, p.Hash = doc.Identity()
	probs.Common(doc.Kind, &doc.Metadata, doc.Namespaced(), spec.MatchConstraints, "conditions", spec.Conditions, spec.Variables, nil)
	if spec.Schedule == "" {
		invalid("spec.schedule", "schedule must not be empty")
	} else if s, err := cronexpr.Parse(spec.Schedule); err != nil {
		invalid("spec.schedule", "schedule spec in the deletingPolicy is not in proper cron format: %v", err)
	} else {
		p.Schedule = s
	}
	if dp := spec.DeletionPropagationPolicy; dp != nil {
		switch *dp {
		case metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			p.Propagation = *dp
		default:
			invalid("spec.deletionPropagationPolicy", "unknown deletion propagation policy %q (want Orphan, Background or Foreground)", *dp)
		}
	}
	env, err := kyvernocel.NewEnv(p.Namespace)
	if err != nil {
		return nil, fmt.Errorf("compile %s %q: %w", doc.Kind, doc.Metadata.Name, err)
	}
	for i, v := range spec.Variables {
		prog, t := probs.Expression(env, v.Expression, fmt.Sprintf("spec.variables[%d].expression", i))
		env.RegisterVariable(v.Name, t)
		p.variables = append(p.variables, &expr{name: v.Name, prog: prog})
	}
	for i, c := range spec.Conditions {
		prog, _ := probs.Expression(env, c.Expression, fmt.Sprintf("spec.conditions[%d].expression", i), cel.BoolType)
		p.conditions = append(p.conditions, prog)
	}
	return vpol.Compiled(p, &probs, doc.Kind, doc.Metadata.Name)
}

// allOperations is matchConstraints with every operation, as Kyverno's
// dpol engine matches existing resources.
func allOperations(mc *admissionregistrationv1.MatchResources) *admissionregistrationv1.MatchResources {
	if mc == nil {
		return nil
	}
	cp := mc.DeepCopy()
	for i := range cp.ResourceRules {
		cp.ResourceRules[i].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	}
	return cp
}

// Result is what the policy decided for an existing resource.
type Result struct {
	// Matched is false when the matchConstraints do not select the
	// resource (Kyverno's CLI then reports nothing).
	Matched bool
	// Delete is true when every condition holds and no exception
	// matched: the resource goes.
	Delete bool
	// Exceptions are the names of the exceptions that kept the resource.
	Exceptions []string
	// Err is a failed matching or expression (the resource stays);
	// Path names the field.
	Err  error
	Path string
}

// Evaluate decides for an existing resource (in's object) as Kyverno's
// dpol engine does: matchConstraints with every operation, variables
// bound lazily, the policies.kyverno.io PolicyExceptions that name the
// policy (one whose match conditions hold keeps the resource), then the
// conditions (all must hold; errors joined).
func (p *Policy) Evaluate(ctx context.Context, in *vpol.Input, exceptions []*vpol.Exception) Result {
	ok, err := p.match.Matches(in)
	if err != nil {
		return Result{Err: err, Path: "spec.matchConstraints"}
	}
	if !ok {
		return Result{}
	}
	act := in.Activation(ctx)
	act.Variables = kyvernocel.NewVariables()
	for _, e := range p.variables {
		act.BindVariable(ctx, e.name, e.prog)
	}
	r := Result{Matched: true}
	for _, e := range exceptions {
		if !e.AppliesTo(p.Kind, p.Name) || e.Expired(in.Now()) {
			continue
		}
		ok, err := e.Matches(ctx, act)
		if err != nil {
			return Result{Matched: true, Err: err, Path: "spec.matchConditions"}
		}
		if ok {
			r.Exceptions = append(r.Exceptions, e.Document().Metadata.Name)
		}
	}
	if len(r.Exceptions) > 0 {
		return r
	}
	ok, err = vpol.MatchConditions(ctx, act, p.conditions, false)
	if err != nil {
		return Result{Matched: true, Err: err, Path: "spec.conditions"}
	}
	r.Delete = ok
	return r
}
