// Package podsecurity evaluates validate.podSecurity rules: the Pod
// Security Standards checks of k8s.io/pod-security-admission at a level
// (baseline, restricted; privileged runs every check, as in Kyverno) and
// version, with Kyverno v1.19's exclusions (controlName, images with
// wildcards, restrictedField, values) and messages (pkg/pss and
// pkg/engine/handlers/validation/validate_pss.go).
//
// Read first: Compile (a *Checker per rule, the checks of its level and
// version chosen once), PodOf (the pod a Pod or pod controller holds),
// Checker.Evaluate, Checker.Exempt (exclusions, also those of
// PolicyExceptions) and Message (Checker.FailMessage for a rule's whole
// message). The field errors of a Memo's results are shared by the rules
// evaluating the pod: Exempt and Message never modify them.
//
// The checks come from Kyverno's fork of pod-security-admission
// (github.com/kyverno/pod-security-admission, wired through a replace in
// go.mod as in Kyverno's own go.mod): it reports the field errors
// (field path, bad values) that exclusions and Kyverno's messages are made
// of, which the upstream module does not, and it has Kyverno's single
// procMount check. With it, results and messages are Kyverno's.
//
// The package depends on engine, engine/kyverno (the policy model),
// engine/match (wildcards), k8s.io/api and apimachinery types and the
// checks; it must not import engine/eval or engine/policy, nor client-go.
package podsecurity
