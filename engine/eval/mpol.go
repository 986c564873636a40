package eval

import (
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// mutatingPolicies runs on obj, after the mutate rules of the kyverno.io
// kinds and in Kyverno's CLI's order, the MutatingAdmissionPolicies
// (map.go), then the MutatingPolicies and NamespacedMutatingPolicies
// (engine/mpol), each kind in the order of policies. Each sees the object
// as the ones before it left it (object; a MutatingPolicy's
// request.object stays the object admitted), appends its results (type
// Mutation, Kyverno's rule names: for a MutatingPolicy "" for the
// mutations, "evaluation", "exception", "match"; a
// MutatingAdmissionPolicy's name) and the object after it
// (Response.Mutations). It returns the object after all of them.
func (ev *evaluation) mutatingPolicies(policies []*policy.Policy, obj map[string]any, resp *Response) map[string]any {
	var in *vpol.Input
	for _, admission := range []bool{true, false} {
		for _, p := range policies {
			if (admission && p.MutatingAdmission == nil) || (!admission && p.Mutating == nil) || !ev.admits(p) {
				continue
			}
			if ev.ctx.Err() != nil || ev.budget.Poll() != nil {
				return obj
			}
			if in == nil {
				in = ev.vpolInput()
			}
			var results []mpol.Result
			if admission {
				r, out := p.MutatingAdmission.Evaluate(ev.ctx, ev.admissionRequest(in.WithObject(obj), obj))
				if r != nil {
					results = append(results, *r)
				}
				obj = out
			} else {
				out := p.Mutating.Evaluate(ev.ctx, in, obj, ev.req.CELExceptions)
				results, obj = out.Results, out.Object
			}
			for _, r := range results {
				resp.Results = append(resp.Results, ev.mutationResult(p, r))
			}
			resp.Mutations = append(resp.Mutations, Mutation{Policy: p.Name(), PolicyNamespace: p.Namespace(), Object: obj})
		}
	}
	return obj
}

// MessageNotApplied is the message of a background scan's fail of a
// MutatingPolicy whose mutations would still change the resource.
const MessageNotApplied = "mutation is not applied"

// backgroundMutatingPolicies reports, in a background scan, whether each
// MutatingPolicy and NamespacedMutatingPolicy has been applied to the
// resource, as Kyverno's background scanner does (pkg/controllers/report
// utils.scanner): each policy is evaluated on its own on the object as
// stored, and a pass of its mutations (not an exception's) becomes a fail
// "mutation is not applied" when they would change the object. Nothing is
// patched.
func (ev *evaluation) backgroundMutatingPolicies(policies []*policy.Policy, resp *Response) {
	var in *vpol.Input
	obj := ev.req.Object
	for _, p := range policies {
		if p.Mutating == nil || !ev.admits(p) {
			continue
		}
		if ev.ctx.Err() != nil || ev.budget.Poll() != nil {
			return
		}
		if in == nil {
			in = ev.vpolInput()
		}
		out := p.Mutating.Evaluate(ev.ctx, in, obj, ev.req.CELExceptions)
		changed := !mutate.Equal(obj, out.Object)
		for _, r := range out.Results {
			res := ev.mutationResult(p, r)
			if changed && r.Rule == "" && res.Status == StatusPass {
				res.Status, res.Message, res.Properties = StatusFail, MessageNotApplied, nil
			}
			resp.Results = append(resp.Results, res)
		}
	}
}

func (ev *evaluation) mutationResult(p *policy.Policy, r mpol.Result) RuleResult {
	res := celResult(p, &r.Result, RuleMutation, r.Path)
	if r.Rule == vpol.RuleMatch && p.Mutating != nil {
		res.Type = RuleValidation // as Kyverno types a matching error
	}
	return res
}
