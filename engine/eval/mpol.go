package eval

import (
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// mutatingPolicies runs the MutatingPolicies and NamespacedMutatingPolicies
// (engine/mpol) on obj, in order, after the mutate rules of the
// kyverno.io kinds, as Kyverno's CLI does: each sees the object as the
// ones before it left it (object; request.object stays the object
// admitted), and appends its results (type Mutation, Kyverno's rule
// names: "" for the mutations, "evaluation", "exception", "match") and
// the object after it (Response.Mutations). It returns the object after
// all of them.
func (ev *evaluation) mutatingPolicies(policies []*policy.Policy, obj map[string]any, resp *Response) map[string]any {
	var in *vpol.Input
	for _, p := range policies {
		if p.Mutating == nil || !ev.admits(p) {
			continue
		}
		if ev.ctx.Err() != nil || ev.budget.Poll() != nil {
			break
		}
		if in == nil {
			in = ev.vpolInput()
		}
		out := p.Mutating.Evaluate(ev.ctx, in, obj, ev.req.CELExceptions)
		for _, r := range out.Results {
			res := RuleResult{
				Policy:     p.Name(),
				Rule:       r.Rule,
				Type:       RuleMutation,
				Status:     Status(r.Status),
				Message:    r.Message,
				Scored:     p.Scored,
				Category:   p.Category,
				Severity:   p.Severity,
				Properties: r.Properties,
				Path:       r.Path,
			}
			if r.Rule == vpol.RuleMatch {
				res.Type = RuleValidation // as Kyverno types a matching error
			}
			if p.Namespaced() {
				res.PolicyNamespace = p.Namespace()
			}
			resp.Results = append(resp.Results, res)
		}
		obj = out.Object
		resp.Mutations = append(resp.Mutations, Mutation{Policy: p.Name(), PolicyNamespace: p.Namespace(), Object: obj})
	}
	return obj
}
