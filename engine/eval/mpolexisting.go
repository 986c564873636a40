package eval

import (
	"context"
	"errors"
	"fmt"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// AllNamespacesLister is implemented by a CEL resource source
// (Options.CELData.Resources) that lists a namespaced resource in every
// namespace in a way of its own; without it, the targets of a
// MutatingPolicy are listed with ListResources and namespace "", which
// the cluster's source answers with every namespace.
type AllNamespacesLister interface {
	ListAllNamespaces(ctx context.Context, apiVersion, resource string) ([]map[string]any, error)
}

// ListAllNamespaces lists the objects of resource in every namespace
// through src: its own ListAllNamespaces when it is an
// AllNamespacesLister, ListResources with namespace "" otherwise. A
// wrapper of a source (a guard, a limiter) implements AllNamespacesLister
// with it, so that the source it wraps is asked its way.
func ListAllNamespaces(ctx context.Context, src kyvernocel.Resources, apiVersion, resource string) ([]map[string]any, error) {
	if l, ok := src.(AllNamespacesLister); ok {
		return l.ListAllNamespaces(ctx, apiVersion, resource)
	}
	return listItems(src.ListResources(ctx, apiVersion, resource, "", nil))
}

// listItems are the objects of a list object.
func listItems(list map[string]any, err error) ([]map[string]any, error) {
	if err != nil {
		return nil, err
	}
	items, _ := list["items"].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if o, ok := it.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// mutateExistingPolicies runs the mutate-existing part of the
// MutatingPolicies and NamespacedMutatingPolicies with
// spec.evaluation.mutateExisting enabled, for the request as a trigger,
// as Kyverno's background controller does for a CELMutate UpdateRequest
// (pkg/background/mpol): a policy whose matchConstraints and match
// conditions hold for the trigger resolves its targets (its
// targetMatchConstraints.expression, or the objects of its target
// resource rules read through Options.CELData, those its constraints
// match), evaluates each (mpol.Policy.EvaluateTarget: object is the
// target, request the trigger's) and returns a TargetPatch for each
// target its mutations change; every target evaluated gives a result,
// as the mutate rules with targets do. The trigger is not changed.
func (ev *evaluation) mutateExistingPolicies(policies []*policy.Policy, resp *Response) {
	var in *vpol.Input
	for _, p := range policies {
		mp := p.Mutating
		if mp == nil || !mp.MutateExisting || !ev.admitsNamespace(p) {
			continue
		}
		if ev.ctx.Err() != nil || ev.budget.Poll() != nil {
			return
		}
		if in == nil {
			in = ev.vpolInput()
		}
		if !mp.TriggerMatches(ev.ctx, in, ev.req.MutateExisting) {
			continue
		}
		targets, err := ev.mpolTargets(mp, in)
		if err != nil {
			r := mpol.Result{Path: "spec.targetMatchConstraints"}
			r.Rule, r.Status, r.Message = vpol.RuleEvaluation, vpol.StatusError, "failed to resolve targets: "+err.Error()
			resp.Results = append(resp.Results, ev.mutationResult(p, r))
			continue
		}
		for _, t := range targets {
			if ev.budget.Poll() != nil {
				return
			}
			r, patched := mp.EvaluateTarget(ev.ctx, in, t, ev.req.CELExceptions)
			res := ev.mutationResult(p, r)
			res.Target = true
			resp.Results = append(resp.Results, res)
			if patched == nil || mutate.Equal(t, patched) {
				continue
			}
			patch, err := mutate.MarshalPatch(mutate.Diff(t, patched))
			if err != nil {
				continue // the objects are JSON: MarshalPatch does not fail
			}
			resp.Targets = append(resp.Targets, TargetPatch{
				Policy: p.Name(), PolicyNamespace: p.Namespace(),
				Target: t, Patched: patched, Patch: patch,
			})
		}
	}
}

// admitsNamespace reports whether a namespaced policy applies to the
// request's namespace (a cluster policy applies everywhere).
func (ev *evaluation) admitsNamespace(p *policy.Policy) bool {
	if !p.Namespaced() {
		return true
	}
	ns := ev.res.Namespace
	if ev.oldRes != nil && ns == "" {
		ns = ev.oldRes.Namespace
	}
	return ns != "" && ns == p.Namespace()
}

// mpolTargets resolves the targets of a policy for the trigger in: those
// its expression returns, or the objects of its target resource rules
// (in the policy's namespace for a NamespacedMutatingPolicy) that its
// target constraints match. More than mpol.MaxTargets is an error.
func (ev *evaluation) mpolTargets(mp *mpol.Policy, in *vpol.Input) ([]map[string]any, error) {
	if mp.TargetConstraints() != nil {
		return ev.listTargets(mp)
	}
	return mp.ResolveTargets(ev.ctx, in)
}

func (ev *evaluation) listTargets(mp *mpol.Policy) ([]map[string]any, error) {
	src := ev.e.celData.Resources
	if src == nil {
		return nil, fmt.Errorf("no cluster data to list the targets of %s %q: %w", mp.Kind, mp.Name, engine.ErrNotFound)
	}
	var out []map[string]any
	var errs []error
	for _, gvr := range mpol.ResourceRules(mp.TargetConstraints()) {
		group, version, resource := gvr[0], gvr[1], gvr[2]
		apiVersion := version
		if group != "" {
			apiVersion = group + "/" + version
		}
		var objs []map[string]any
		var err error
		if mp.Namespace == "" {
			objs, err = ListAllNamespaces(ev.ctx, src, apiVersion, resource)
		} else {
			objs, err = listItems(src.ListResources(ev.ctx, apiVersion, resource, mp.Namespace, nil))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s %s: %w", apiVersion, resource, err))
			continue
		}
		for _, o := range objs {
			ok, err := mp.TargetMatches(ev.targetInput(o, group, version, resource))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
			if len(out) == mpol.MaxTargets {
				return nil, mpol.ErrTooManyTargets
			}
			out = append(out, o)
		}
	}
	return out, errors.Join(errs...)
}

// targetInput describes a listed target as a request, for its
// constraints: the resource it was listed as, its namespace's labels.
func (ev *evaluation) targetInput(obj map[string]any, group, version, resource string) *vpol.Input {
	r := vpol.Request{
		Resource: resource, ResourceGroup: group, ResourceVersion: version,
		Operation: "UPDATE",
		Object:    obj,
		Now:       ev.e.now(),
	}
	md, _ := obj["metadata"].(map[string]any)
	if ns, _ := md["namespace"].(string); ns != "" {
		if nsObj, err := ev.e.lookup.Namespace(ev.ctx, ns); err == nil {
			r.NamespaceObject = nsObj
		}
	}
	return vpol.NewInput(r)
}
