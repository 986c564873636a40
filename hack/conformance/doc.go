// Command conformance runs Kyverno's policy library test suites
// (kyverno-test.yaml) through Verdict's test runner, prints the share of
// expected results that pass per class of policy features, and guards
// against regressions with a baseline file.
//
//	go run ./hack/conformance                               # table only
//	go run ./hack/conformance -baseline conformance/baseline.txt
//	go run ./hack/conformance -baseline conformance/baseline.txt -update
//
// The baseline is the sorted list of the keys of the expected results that
// pass, one per line: <test file relative to the corpus>|<policy>|<rule>|
// <resource>|<expected result>. Without -update, a baseline key that does
// not pass now is a regression: each is printed and the exit code is 1.
// The last line is "N passed, N failed" where failed counts regressions.
//
// Suites are classed by the features their policies use: validate only
// (pattern, anyPattern, deny, foreach), cel/podSecurity/verifyImages/
// manifests, mutate/generate, ValidatingPolicy (suites whose newer kinds
// are ValidatingPolicies and NamespacedValidatingPolicies only),
// MutatingPolicy (suites whose newer kinds are MutatingPolicies and
// NamespacedMutatingPolicies, with or without ValidatingPolicies),
// GeneratingPolicy (the same for GeneratingPolicies and
// NamespacedGeneratingPolicies), and the other newer policy kinds (policies.kyverno.io,
// ValidatingAdmissionPolicy...). A suite is in the class of its most
// demanding policy. Results of a policy that does not
// compile fail (StrictPolicies), unlike kyverno test, which skips them.
//
// It depends on kyvernotest, and on internal/testing/testcorpus to find
// the corpus next to the repository when -corpus is not given.
package main
