// Package testcorpus reads policy files for tests and benchmarks: the
// ClusterPolicies of a folder of the kyverno/policies corpus (which lies
// next to the repository, in ../shared/conformance/kyverno-policies, in
// development and CI, and is absent from a fresh clone) or of any folder.
//
// Read first: Corpus (where a corpus folder is, and whether it is there)
// and ClusterPolicies (the files of a folder that hold one ClusterPolicy).
//
// Only tests, benchmarks and hack/conformance (the corpus run) import
// it; it must not depend on the rest of Verdict.
package testcorpus
