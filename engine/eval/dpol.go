package eval

import (
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// deletingPolicy appends the result of a DeletingPolicy or
// NamespacedDeletingPolicy (engine/dpol) for the request's object as
// Kyverno's CLI reports it (Options.KyvernoCLI only; a cluster runs these
// policies on their schedule, not on requests): nothing when the
// matchConstraints do not select it; rule the policy's name, type
// Deletion, pass "resource matched" when it would be deleted, fail
// "resource did not match" when a condition does not hold or an
// exception keeps it, error when matching or an expression failed.
func (ev *evaluation) deletingPolicy(p *policy.Policy, out []RuleResult) []RuleResult {
	if !ev.e.kyvernoCLI || len(ev.object()) == 0 {
		return out
	}
	if p.Namespaced() && ev.res.Namespace != p.Namespace() {
		return out
	}
	r := p.Deleting.Evaluate(ev.ctx, ev.vpolInput(), ev.req.CELExceptions)
	if !r.Matched && r.Err == nil {
		return out
	}
	res := celResult(p, &vpol.Result{Rule: p.Name(), Status: vpol.StatusPass, Message: "resource matched"}, RuleDeletion, "")
	switch {
	case r.Err != nil:
		res.Status, res.Message, res.Path = StatusError, r.Err.Error(), r.Path
	case !r.Delete:
		res.Status, res.Message = StatusFail, "resource did not match"
	}
	return append(out, res)
}
