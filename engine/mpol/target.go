package mpol

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"google.golang.org/protobuf/types/known/structpb"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// MaxTargets bounds the targets one policy mutates for one trigger (the
// objects its targetMatchConstraints.expression returns, or those listed
// for its resource rules): past it, ResolveTargets and the host's listing
// are an error (ErrTooManyTargets) and nothing is mutated.
const MaxTargets = 1000

// ErrTooManyTargets is the error of a trigger with more than MaxTargets
// targets.
var ErrTooManyTargets = fmt.Errorf("more than %d mutate-existing targets", MaxTargets)

// targets is what a policy with mutateExisting compiles for its targets:
// spec.targetMatchConstraints.expression (a map: one object, or a list
// object with items), spec.targetMatchConditions, and the constraints a
// listed target must match.
type targets struct {
	expression *expr
	conditions []cel.Program
	// constraints are spec.targetMatchConstraints' resource rules, or
	// spec.matchConstraints without them, with every operation (a target
	// is not an admission request); nil with an expression.
	constraints *admissionregistrationv1.MatchResources
	match       *vpol.Matcher
	// replay matches a trigger replayed in the background (its
	// matchConstraints with every operation, as Kyverno lists the
	// triggers of a new policy).
	replay *vpol.Matcher
}

// compileTargets compiles the mutate-existing part of spec, after its
// variables (registered in env), as Kyverno's mpol compiler does.
func (c *compiler) compileTargets(env *kyvernocel.Env, p *Policy) {
	spec := &p.doc.Spec
	t := &targets{}
	if spec.MatchConstraints != nil {
		t.replay = vpol.CompileMatcher(anyOperation(spec.MatchConstraints))
	}
	tmc := spec.TargetMatchConstraints
	if tmc != nil && tmc.Expression != "" {
		prog, _ := c.expression(env, tmc.Expression, "spec.targetMatchConstraints.expression", cel.MapType(cel.StringType, cel.AnyType))
		t.expression = &expr{name: "targetMatchConstraints", prog: prog}
	} else {
		mc := spec.MatchConstraints
		if tmc != nil && len(tmc.ResourceRules) > 0 {
			mc = &tmc.MatchResources
		}
		if mc != nil {
			t.constraints = anyOperation(mc)
			t.match = vpol.CompileMatcher(t.constraints)
		}
	}
	for i, m := range spec.TargetMatchConditions {
		path := fmt.Sprintf("spec.targetMatchConditions[%d]", i)
		if m.Name == "" {
			c.Invalid(path+".name", "a name is required")
		}
		if m.Expression == "" {
			c.Invalid(path+".expression", "an expression is required")
			continue
		}
		prog, _ := c.expression(env, m.Expression, path+".expression", cel.BoolType)
		t.conditions = append(t.conditions, prog)
	}
	p.targets = t
}

// anyOperation returns a copy of mc whose resource rules match every
// operation: Kyverno's CLI matches targets so (its background controller
// lists them, whatever the operation).
func anyOperation(mc *admissionregistrationv1.MatchResources) *admissionregistrationv1.MatchResources {
	cp := mc.DeepCopy()
	for i := range cp.ResourceRules {
		cp.ResourceRules[i].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	}
	return cp
}

// TargetConstraints returns the constraints of the targets a host lists
// for the policy (the resource rules of spec.targetMatchConstraints, or
// spec.matchConstraints without them, with every operation), or nil when
// spec.targetMatchConstraints.expression resolves them (ResolveTargets)
// or the policy does not mutate existing resources. Callers must not
// modify it.
func (p *Policy) TargetConstraints() *admissionregistrationv1.MatchResources {
	if p.targets == nil || p.targets.expression != nil {
		return nil
	}
	return p.targets.constraints
}

// TargetMatches reports whether a listed target (in: the target as a
// request, with its plural resource) matches the policy's target
// constraints.
func (p *Policy) TargetMatches(in *vpol.Input) (bool, error) {
	if p.targets == nil || p.targets.match == nil {
		return false, nil
	}
	return p.targets.match.Matches(in)
}

// TriggerMatches reports whether in is a trigger of the policy's
// mutate-existing: spec.evaluation.mutateExisting is enabled, the
// matchConstraints match and the match conditions hold (with the
// variables bound), as Kyverno's MatchesMutateExisting decides; an
// expression that fails does not match. A trigger replayed in the
// background (replay) matches whatever its operation.
func (p *Policy) TriggerMatches(ctx context.Context, in *vpol.Input, replay bool) bool {
	if !p.MutateExisting || p.targets == nil || len(p.variants) == 0 {
		return false
	}
	v := p.variants[0]
	m := v.match
	if replay && p.targets.replay != nil {
		m = p.targets.replay
	}
	if ok, err := m.Matches(in); err != nil || !ok {
		return false
	}
	act := in.Activation(ctx)
	act.Variables = kyvernocel.NewVariables()
	for _, e := range v.variables {
		act.BindVariable(ctx, e.name, e.prog)
	}
	ok, err := vpol.MatchConditions(ctx, act, v.matchConditions, false)
	return err == nil && ok
}

// ResolveTargets evaluates spec.targetMatchConstraints.expression for the
// trigger in (object is the trigger, the variables bound): a list object's
// items, or the one object it returns; null or an empty list is no
// target. It returns nil, nil for a policy whose targets are listed
// (TargetConstraints). An item that is not an object, or more than
// MaxTargets items, is an error naming the field.
func (p *Policy) ResolveTargets(ctx context.Context, in *vpol.Input) ([]map[string]any, error) {
	if p.targets == nil || p.targets.expression == nil || len(p.variants) == 0 {
		return nil, nil
	}
	v := p.variants[0]
	act := in.Activation(ctx)
	act.Variables = kyvernocel.NewVariables()
	for _, e := range v.variables {
		act.BindVariable(ctx, e.name, e.prog)
	}
	fail := func(err error) error {
		return fmt.Errorf("%s %q: spec.targetMatchConstraints.expression: %w", p.Kind, p.Name, err)
	}
	val, _, err := p.targets.expression.prog.ContextEval(ctx, act)
	if err != nil {
		return nil, fail(err)
	}
	pv, err := val.ConvertToNative(reflect.TypeFor[*structpb.Value]())
	if err != nil {
		return nil, fail(err)
	}
	native := pv.(*structpb.Value).AsInterface()
	if native == nil {
		return nil, nil
	}
	m, ok := native.(map[string]any)
	if !ok {
		return nil, fail(fmt.Errorf("the expression returned %T, not an object", native))
	}
	items, isList := m["items"].([]any)
	if !isList {
		return []map[string]any{m}, nil
	}
	if len(items) > MaxTargets {
		return nil, fail(ErrTooManyTargets)
	}
	out := make([]map[string]any, 0, len(items))
	for i, it := range items {
		o, ok := it.(map[string]any)
		if !ok {
			return nil, fail(fmt.Errorf("items[%d] is %T, not a Kubernetes object", i, it))
		}
		out = append(out, o)
	}
	return out, nil
}

// EvaluateTarget mutates one target of the trigger in, as Kyverno's mpol
// engine evaluates a target (EvaluateTarget): object is the target (and
// Object in the ApplyConfiguration expressions), oldObject and
// namespaceObject are null, request is the trigger's request (so
// request.object is the trigger); the exceptions, the variables (bound
// lazily, read from the target's data), spec.targetMatchConditions instead
// of the match conditions, then the mutations and audit annotations. It
// returns the result (a skip when a target match condition does not
// hold) and the patched target (nil unless every mutation applied; the
// target is not modified).
func (p *Policy) EvaluateTarget(ctx context.Context, in *vpol.Input, target map[string]any, exceptions []*vpol.Exception) (r Result, patched map[string]any) {
	if p.targets == nil || len(p.variants) == 0 {
		r := vpol.Result{Rule: vpol.RuleEvaluation, Status: vpol.StatusError, Message: MessageEvaluation + "the policy does not mutate existing resources"}
		return Result{Result: r, Path: "spec.evaluation.mutateExisting"}, nil
	}
	v := p.variants[0]
	var excs []*vpol.Exception
	for _, e := range exceptions {
		if e.AppliesTo(p.Kind, p.Name) && !e.Expired(in.Now()) {
			excs = append(excs, e)
		}
	}
	act := in.Activation(ctx)
	act.Object, act.OldObject, act.NamespaceObject = target, nil, nil
	return v.run(ctx, act, in.ApplyTypes(), target, excs, p.targets.conditions, "spec.targetMatchConditions", "")
}

// ResourceRules lists the group, version and resource of each resource
// rule of mc, without duplicates (subresources and wildcards left out: a
// host lists the main resources it can name).
func ResourceRules(mc *admissionregistrationv1.MatchResources) [][3]string {
	var out [][3]string
	if mc == nil {
		return nil
	}
	for _, r := range mc.ResourceRules {
		for _, g := range r.APIGroups {
			for _, ver := range r.APIVersions {
				for _, res := range r.Resources {
					if g == "*" || ver == "*" || strings.Contains(res, "*") || strings.Contains(res, "/") {
						continue
					}
					k := [3]string{g, ver, res}
					if !slices.Contains(out, k) {
						out = append(out, k)
					}
				}
			}
		}
	}
	return out
}
