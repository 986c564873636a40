package eval

import (
	"github.com/verdict-policy/verdict/engine/policy"
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
	res := RuleResult{
		Policy: p.Name(), Rule: p.Name(), Type: RuleDeletion,
		Status: StatusPass, Message: "resource matched",
		Scored: p.Scored, Category: p.Category, Severity: p.Severity,
	}
	if p.Namespaced() {
		res.PolicyNamespace = p.Namespace()
	}
	switch {
	case r.Err != nil:
		res.Status, res.Message, res.Path = StatusError, r.Err.Error(), r.Path
	case !r.Delete:
		res.Status, res.Message = StatusFail, "resource did not match"
	}
	return append(out, res)
}
