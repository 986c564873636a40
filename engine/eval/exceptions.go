package eval

import (
	"strings"

	"github.com/verdict-policy/verdict/engine/policy"
)

// exceptions returns the request's PolicyExceptions that apply to rule r
// of p, in the order of Request.Exceptions, as Kyverno's MatchesException
// selects them: the exception lists the policy and rule, its match block
// selects the resource (the old object for DELETE), and its conditions
// hold in the rule's scope (a condition that cannot be evaluated drops the
// exception). In background scans, exceptions with background: false do
// not apply.
func (ev *evaluation) exceptions(p *policy.Policy, r *policy.Rule, s *scope) []*policy.Exception {
	if len(ev.req.Exceptions) == 0 {
		return nil
	}
	res := &ev.res
	if len(ev.object()) == 0 && ev.oldRes != nil {
		res = ev.oldRes
	}
	var out []*policy.Exception
	for _, ex := range ev.req.Exceptions {
		if ex == nil || (ev.req.Mode == Background && !ex.Background) {
			continue
		}
		if !ex.Covers(p, r.Name) || !ex.Matches(res) {
			continue
		}
		if ex.Conditions != nil {
			ok, _, err := s.conditions(ex.Conditions)
			if err != nil || !ok {
				continue
			}
		}
		out = append(out, ex)
	}
	return out
}

// exceptionKeys joins the keys of exceptions as Kyverno's messages do.
func exceptionKeys(exs []*policy.Exception) string {
	keys := make([]string, len(exs))
	for i, ex := range exs {
		keys[i] = ex.Key()
	}
	return strings.Join(keys, ", ")
}

// exceptionSkip is the result of a rule that exceptions exempt. The
// message is Kyverno's, without a space before the keys.
func exceptionSkip(exs []*policy.Exception) *outcome {
	return skip("rule is skipped due to policy exceptions" + exceptionKeys(exs))
}

// validateSpecial runs what comes after the preconditions of a validate
// rule that this file and its neighbours handle: PolicyExceptions, then
// validate.cel and validate.podSecurity rules. handled is false for a
// pattern, anyPattern, deny or foreach rule that no exception exempts,
// which the validator then evaluates.
func (ev *evaluation) validateSpecial(p *policy.Policy, r *policy.Rule, s *scope) (o *outcome, handled bool) {
	exs := ev.exceptions(p, r, s)
	switch {
	case r.PodSecurity != nil:
		return ev.podSecurityRule(p, r, exs), true
	case len(exs) > 0:
		return exceptionSkip(exs), true
	case r.CEL != nil:
		return ev.celRule(r), true
	case r.Manifests != nil:
		return ev.manifestsRule(r), true // manifests.go
	}
	return nil, false
}
