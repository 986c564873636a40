package kyvernotest

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// Reasons of results that are not a comparison of statuses.
const (
	ReasonOK       = "Ok"
	ReasonExcluded = "Excluded"
	ReasonNotFound = "Not found"
	// ReasonInvalidPolicy: the policy does not load; kyverno test shows
	// the result as Skip (counted as passed) unless --strict-policies.
	ReasonInvalidPolicy = "Invalid Policy"
)

// row is one comparison of an expected result with one rule result, as a
// row of Kyverno's test table.
type row struct {
	rule    string
	ok      bool
	actual  string
	reason  string
	message string
}

// check compares one expected result with the responses, per resource,
// as kyverno test does:
//
//   - the expected resources are matched by name or namespace/name (not by
//     kind); when none matches, every resource of the test is checked;
//   - for each resource, the responses of the policy named by the result
//     (a namespace/ prefix is ignored) are checked, and in them the results
//     of the rule, its autogen-<rule> and autogen-cronjob-<rule>; without a
//     rule, every result of the policy;
//   - a response with no result of that rule means the rule did not match
//     the resource: the check passes as "Excluded";
//   - no response at all fails as "Not found", unless the policy was
//     skipped as invalid.
//
// Verdict adds one rule: a result of a rule the engine cannot evaluate yet
// fails with the reason, whatever was expected.
func (s *suiteRun) check(testPath string, e ExpectedResult) []Result {
	out := s.targetResults(testPath, e)
	resolved := s.resolve(e)
	if len(out) == 0 && len(resolved) == 0 && s.namesTargets(e) {
		// A target no policy patched: Kyverno's CLI has no response for
		// it.
		out = append(out, Result{Test: testPath, Policy: e.Policy, Rule: e.Rule, Resource: strings.Join(e.Resources, ","), Expected: e.Result, Reason: ReasonNotFound, Message: ReasonNotFound})
	}
	for _, rr := range resolved {
		rows, skipped := s.rows(e, rr)
		if len(rows) == 0 {
			if skipped {
				continue
			}
			rows = []row{s.missing(e)}
		}
		pick := rows[0]
		ok := true
		for _, r := range rows {
			if !r.ok {
				if ok {
					pick = r
				}
				ok = false
			}
		}
		out = append(out, Result{
			Test:       testPath,
			Policy:     e.Policy,
			Rule:       e.Rule,
			Resource:   rr.res.Display(),
			Expected:   e.Result,
			Actual:     pick.actual,
			OK:         ok,
			Reason:     pick.reason,
			Message:    pick.message,
			ActualRule: pick.rule,
		})
	}
	return out
}

// resolve returns the resources an expected result names.
func (s *suiteRun) resolve(e ExpectedResult) []*resourceRun {
	var out []*resourceRun
	seen := map[*resourceRun]bool{}
	add := func(rr *resourceRun) {
		if !seen[rr] {
			seen[rr] = true
			out = append(out, rr)
		}
	}
	for _, name := range e.Resources {
		parts := strings.Split(name, "/")
		for _, rr := range s.resources {
			switch len(parts) {
			case 1:
				if parts[0] == rr.res.Name {
					add(rr)
				}
			case 2:
				if parts[0] == rr.res.Namespace && parts[1] == rr.res.Name {
					add(rr)
				}
			}
		}
	}
	for _, spec := range e.ResourceSpecs {
		apiVersion := spec.Version
		if spec.Group != "" {
			apiVersion = spec.Group + "/" + spec.Version
		}
		for _, rr := range s.resources {
			if rr.res.APIVersion == apiVersion && rr.res.Namespace == spec.Namespace && rr.res.Name == spec.Name {
				add(rr)
			}
		}
	}
	if len(out) == 0 && !s.namesTargets(e) {
		return s.resources
	}
	return out
}

// policyName is the name part of an expected result's policy.
func policyName(p string) string {
	return p[strings.LastIndex(p, "/")+1:]
}

// ruleMatches reports whether a rule result answers an expected rule.
func ruleMatches(expected, actual string) bool {
	return actual == expected || actual == "autogen-"+expected || actual == "autogen-cronjob-"+expected
}

// rows checks the expected result against one resource's responses. It
// reports skipped when a result was dropped because the expected patched
// or generated manifest does not hold the resource (Kyverno skips those
// unless failOnMissingResources is set).
func (s *suiteRun) rows(e ExpectedResult, rr *resourceRun) (rows []row, skipped bool) {
	name := policyName(e.Policy)
	for _, resp := range rr.responses[e.Operation] {
		if resp.pol.Name != name {
			continue
		}
		for _, res := range resp.results {
			if e.Rule != "" && !resp.pol.ruleless && !ruleMatches(e.Rule, res.Rule) {
				continue
			}
			rs, skip := s.resultRows(e, resp, rr.res, res)
			if skip {
				skipped = true
				continue
			}
			rows = append(rows, rs...)
		}
		if len(rows) == 0 && !skipped {
			rows = append(rows, row{rule: e.Rule, ok: true, reason: ReasonExcluded, message: ReasonExcluded})
		}
	}
	return rows, skipped
}

func (s *suiteRun) row(e ExpectedResult, p *Policy, res *Resource, rr eval.RuleResult) (row, bool) {
	r := row{rule: rr.Rule, actual: string(rr.Status), message: rr.Message}
	if why, ok := p.unsupportedRules[rr.Rule]; ok && rr.Status == eval.StatusError {
		r.reason = why
		return r, false
	}
	// The patched and generated resources are compared with the
	// expected manifests before (resultRows in mutations.go).
	if r.actual == e.Result {
		r.ok = true
		r.reason = ReasonOK
		return r, false
	}
	r.reason = fmt.Sprintf("Want %s, got %s", e.Result, r.actual)
	return r, false
}

// missing is the row of an expected result whose policy gave no response
// for the resource.
func (s *suiteRun) missing(e ExpectedResult) row {
	name := policyName(e.Policy)
	for _, p := range s.policies {
		if p.Name != name {
			continue
		}
		switch {
		case p.Unsupported != "":
			return row{rule: e.Rule, reason: p.Unsupported}
		case p.Err != nil && skippable(p.Err) && !p.ruleless && !s.r.opts.StrictPolicies:
			// Kyverno's CLI skips invalid kyverno.io policies; a
			// ValidatingPolicy that does not compile stops its test.
			return row{rule: e.Rule, ok: true, actual: "skip", reason: ReasonInvalidPolicy, message: p.Err.Error()}
		case p.Err != nil:
			return row{rule: e.Rule, reason: ReasonInvalidPolicy + ": " + p.Err.Error()}
		}
	}
	return row{rule: e.Rule, reason: ReasonNotFound, message: ReasonNotFound}
}

// skippable reports whether a compile error makes Kyverno's CLI skip the
// policy (a validation error of the policy) rather than fail loading it.
func skippable(err error) bool {
	es := engine.As(err)
	if len(es) == 0 {
		return false
	}
	for _, e := range es {
		switch e.Code {
		case engine.CodeInvalidPolicy, engine.CodeInvalidVariable, engine.CodeInvalidPattern, engine.CodeBackgroundUserInfo:
		default:
			return false
		}
	}
	return true
}

func (s *suiteRun) full(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}
