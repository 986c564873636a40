package kyvernotest

import (
	"fmt"
	"strings"
)

// selector is Kyverno's --test-case-selector: wildcards on the policy, rule
// and resource of expected results.
type selector struct {
	policies, rules, resources []string
}

// parseSelector parses "policy=<wildcard>,rule=<wildcard>,resource=<wildcard>".
// Every key is optional; an empty string selects everything.
func parseSelector(in string) (selector, error) {
	var s selector
	if strings.TrimSpace(in) == "" {
		return s, nil
	}
	for _, part := range strings.Split(in, ",") {
		kv := strings.Split(part, "=")
		if len(kv) != 2 {
			return s, fmt.Errorf("test case selector %q: want <key>=<value>", part)
		}
		k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		switch k {
		case "policy":
			s.policies = append(s.policies, v)
		case "rule":
			s.rules = append(s.rules, v)
		case "resource":
			s.resources = append(s.resources, v)
		default:
			return s, fmt.Errorf("test case selector %q: key must be policy, rule or resource", part)
		}
	}
	return s, nil
}

// apply reports whether an expected result is selected. As in Kyverno, a
// result without a policy, rule or resources passes that filter, and a
// resource filter other than "*" replaces the result's resources.
func (s selector) apply(e ExpectedResult) (ExpectedResult, bool) {
	for _, p := range s.policies {
		if e.Policy != "" && !wildcard(p, e.Policy) {
			return e, false
		}
	}
	for _, r := range s.rules {
		if e.Rule != "" && !wildcard(r, e.Rule) {
			return e, false
		}
	}
	for _, r := range s.resources {
		if len(e.Resources) == 0 {
			continue
		}
		found := false
		for _, name := range e.Resources {
			if wildcard(r, name) {
				found = true
				break
			}
		}
		if !found {
			return e, false
		}
	}
	var replace []string
	for _, r := range s.resources {
		if r == "*" {
			break
		}
		replace = append(replace, r)
	}
	if len(replace) > 0 {
		e.Resources = replace
	}
	return e, true
}

// wildcard matches s against a pattern where * is any run of characters
// and ? any one character.
func wildcard(pattern, s string) bool {
	if pattern == "*" || pattern == s {
		return true
	}
	p, t := 0, 0
	star, mark := -1, 0
	for t < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[t]):
			p++
			t++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, t
			p++
		case star >= 0:
			p = star + 1
			mark++
			t = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
