package eval

import (
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/internal/memo"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/pattern"
	"github.com/verdict-policy/verdict/engine/policy"
)

// outcome is the result of a rule or of a part of it, before it becomes a
// RuleResult. A nil *outcome means "no result" (Kyverno returns none, for
// example for a foreach over an empty list).
type outcome struct {
	status  Status
	message string
	// props are report properties the rule's evaluation adds to its
	// result (a failed podSecurity rule's controls).
	props map[string]string
}

func pass(msg string) *outcome { return &outcome{status: StatusPass, message: msg} }
func fail(msg string) *outcome { return &outcome{status: StatusFail, message: msg} }
func skip(msg string) *outcome { return &outcome{status: StatusSkip, message: msg} }
func errorf(f string, a ...any) *outcome {
	return &outcome{status: StatusError, message: fmt.Sprintf(f, a...)}
}
func ruleError(msg string, err error) *outcome {
	if err != nil {
		return &outcome{status: StatusError, message: msg + ": " + err.Error()}
	}
	return &outcome{status: StatusError, message: msg}
}

// stopped is the outcome of a rule that the evaluation's budget or
// deadline stopped: an error naming the limit (engine.Budget's message).
func stopped(err error) *outcome { return &outcome{status: StatusError, message: errText(err)} }

// Outcomes are never changed once made (mutate.go changes only those it
// makes itself), so the frequent pass outcomes of validate rules are
// shared.
var (
	passedElements = pass("")
	passedForeach  = pass("rule passed")
	passOutcomes   = memo.New[string, *outcome](4096)
)

// passOutcome is pass(pattern.PassMessage(rule)), shared.
func passOutcome(rule string) *outcome {
	return passOutcomes.Get(rule, func(rule string) *outcome { return pass(pattern.PassMessage(rule)) })
}

// policy appends the results of p's validate and verifyImages rules to
// out.
func (ev *evaluation) policy(p *policy.Policy, out []RuleResult) []RuleResult {
	if p.Deleting != nil {
		return ev.deletingPolicy(p, out) // dpol.go
	}
	if !ev.admits(p) {
		return out
	}
	if p.Validating != nil {
		return ev.validatingPolicy(p, out) // vpol.go
	}
	if p.VAP != nil {
		return ev.admissionPolicy(p, out) // vap.go
	}
	if p.ImageValidating != nil {
		return ev.imageValidatingPolicy(p, out) // ivpol.go
	}
	applied := 0
	for _, r := range p.Rules {
		if ev.ctx.Err() != nil {
			break
		}
		if r.Type == policy.Mutate || r.Type == policy.Generate {
			continue // mutate.go, generate.go
		}
		o := ev.rule(p, r)
		if o == nil {
			continue
		}
		res := ev.ruleResult(p, r, o)
		res.Enforce = ev.enforce(r)
		if !p.Scored && res.Status == StatusFail {
			res.Status = StatusWarn
		}
		out = append(out, res)
		if o.status == StatusPass || o.status == StatusFail {
			applied++
		}
		if p.ApplyOne && applied > 0 {
			break
		}
	}
	return out
}

// matches applies a rule's match and exclude blocks. For a request without
// an object (DELETE), the old object is matched instead.
func (ev *evaluation) matches(r *policy.Rule, res *match.Resource) bool {
	return r.Match != nil && r.Match.Applies(res)
}

func (ev *evaluation) rule(p *policy.Policy, r *policy.Rule) *outcome {
	if ev.req.Mode == Background && r.UsesUserInfo {
		return nil
	}
	res := &ev.res
	if !ev.matches(r, res) {
		if ev.oldRes == nil || !ev.matches(r, ev.oldRes) {
			return nil
		}
	}
	if err := ev.budget.Poll(); err != nil {
		return stopped(err)
	}
	o := ev.matchedRule(p, r)
	// Work the budget stopped may have been taken for a result (a
	// condition that did not hold, an element skipped): the rule reports
	// the stop instead.
	if err := ev.budget.Err(); err != nil {
		return stopped(err)
	}
	return o
}

// matchedRule evaluates a rule that matched the request.
func (ev *evaluation) matchedRule(p *policy.Policy, r *policy.Rule) *outcome {
	if r.Type == policy.VerifyImages {
		return ev.validateImagesRule(p, r) // verifyimages.go
	}
	if r.Unsupported != "" {
		return errorf("%s", r.Unsupported)
	}
	s := ev.newScope(p, r)
	defer ev.release(s)
	if o := s.unmet(r.Context, r.Preconditions); o != nil {
		return o
	}
	if r.Type == policy.Validate {
		if o, handled := ev.validateSpecial(p, r, s); handled {
			return o
		}
	}
	if r.Validate == nil {
		return nil
	}
	v := &validator{ev: ev, rule: r, val: r.Validate}
	o := v.validate(s, nil)
	if o == nil {
		return nil
	}
	if ev.enforce(r) && r.AllowExistingViolations {
		switch {
		case ev.operation == "UPDATE" && o.status == StatusFail && len(ev.req.OldObject) > 0:
			if prior := ev.priorOutcome(p, r); prior != nil && prior.status == StatusFail {
				return skip("skipping the rule evaluation as pre-existing violations are allowed")
			}
		case ev.operation != "UPDATE" && ev.hasOldAndNew():
			// Kyverno's IsUpdateRequest holds (an object and an old
			// object), but its validateOldObject refuses any operation
			// other than UPDATE: the rule is skipped, whatever its
			// outcome.
			return skip("failed to validate old object")
		}
	}
	return o
}

// hasOldAndNew reports whether the request has both an object and an old
// object, which Kyverno's engine (IsUpdateRequest) takes for an update
// whatever the operation.
func (ev *evaluation) hasOldAndNew() bool {
	return len(ev.req.Object) > 0 && len(ev.req.OldObject) > 0
}

// priorOutcome evaluates the rule on the old object as if it were being
// created, to tell an existing violation from a new one.
func (ev *evaluation) priorOutcome(p *policy.Policy, r *policy.Rule) *outcome {
	req := priorRequest(ev.req)
	prior := ev.e.newEvaluation(ev.ctx, &req)
	prior.budget = ev.budget
	if !prior.matches(r, &prior.res) {
		return skip("resource not matched")
	}
	s := prior.newScope(p, r)
	s.loadContext(r.Context)
	ok, _, err := s.conditions(r.Preconditions)
	if err != nil || !ok {
		return nil
	}
	v := &validator{ev: prior, rule: r, val: r.Validate}
	return v.validate(s, nil)
}

// priorRequest is the request of Kyverno's validateOldObject: the old
// object being created (operation CREATE, object the old object, no
// oldObject). As Kyverno's SetOperation and SetResources replace them in
// its JSON context, Variables that set request.operation, request.object
// or request.oldObject (the CLI's values, request-wide or per rule) do
// not apply to it; the others do.
func priorRequest(in *Request) Request {
	req := *in
	req.Operation = "CREATE"
	req.Object = in.OldObject
	req.OldObject = nil
	if len(in.Variables) > 0 {
		req.Variables = make(map[string]any, len(in.Variables))
		for k, v := range in.Variables {
			if !replacedByPrior(k) {
				req.Variables[k] = v
			}
		}
	}
	if len(in.RuleVariables) > 0 {
		req.RuleVariables = make(map[RuleKey]map[string]any, len(in.RuleVariables))
		for key, vars := range in.RuleVariables {
			kept := make(map[string]any, len(vars))
			for k, v := range vars {
				if !replacedByPrior(k) {
					kept[k] = v
				}
			}
			req.RuleVariables[key] = kept
		}
	}
	return req
}

func replacedByPrior(key string) bool {
	for _, p := range []string{"request.operation", "request.object", "request.oldObject"} {
		if key == p || strings.HasPrefix(key, p+".") {
			return true
		}
	}
	return false
}

// enforce reports whether a failure of r blocks the request, applying the
// failure action overrides for the request's namespace.
func (ev *evaluation) enforce(r *policy.Rule) bool {
	action := r.Action
	ns := ev.res.Namespace
	for _, o := range r.Overrides {
		if o.Selector != nil && !o.Selector.Matches(ev.req.NamespaceLabels) {
			continue
		}
		if len(o.Namespaces) > 0 && !ev.matchAny(o.Namespaces, ns) {
			continue
		}
		action = o.Action
		break
	}
	return action == policy.Enforce
}

func (ev *evaluation) properties(p *policy.Policy, r *policy.Rule) map[string]string {
	s := ev.newScope(p, r)
	s.loadContext(r.Context)
	out := make(map[string]string, len(r.ReportProperties))
	for k, t := range r.ReportProperties {
		v, err := renderString(s, t)
		if err != nil {
			continue
		}
		out[k] = v
	}
	return out
}

// matchAny reports whether s matches one of the wildcard patterns,
// charging the budget (a stopped budget matches nothing).
func (ev *evaluation) matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if m, err := ev.budget.Match(p, s); m || err != nil {
			return m
		}
	}
	return false
}

func joinNonEmpty(sep string, parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
	}
	return b.String()
}
