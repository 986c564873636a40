package vpol

import admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

// Matcher is a compiled matchConstraints, matched as a ValidatingPolicy's
// are (match.go). engine/vap matches ValidatingAdmissionPolicies and their
// bindings with it: Kyverno matches every kind with matchConstraints
// through the same pkg/cel/matching.
type Matcher struct{ m *matcher }

// NewMatcher compiles mc; a nil mc matches nothing. A selector that does
// not parse is an error of Matches once the resource rules match.
func NewMatcher(mc *admissionregistrationv1.MatchResources) *Matcher {
	return &Matcher{m: compileMatcher(mc)}
}

// Matches reports whether the request of in is one the constraints
// select.
func (m *Matcher) Matches(in *Input) (bool, error) { return m.m.matches(in) }
