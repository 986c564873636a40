// Package cases is the engine's behaviour as data: the case corpus of
// testdata/<area>/*.yaml, one runner's specification for every runner.
//
// A Case holds an inline policy (or several: the kyverno.io kinds,
// ValidatingPolicies, MutatingPolicies, ImageValidatingPolicies,
// GeneratingPolicies, DeletingPolicies, and Kubernetes'
// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their
// bindings), a resource, the rest of the request, the data the host serves (ConfigMaps,
// params, cluster objects, PolicyExceptions, the data of the CEL
// libraries), and the expected results with Kyverno's messages, or the
// expected compile error (code and path), or the outputs of mutate and
// generate rules. A case marked kyvernoCLI is evaluated as Kyverno's CLI
// evaluates (ValidatingAdmissionPolicies at admission, binding params found
// as the CLI finds them). Load reads them all. A bug fix starts with a
// case.
//
// Three runners replay the corpus, as OPA's v1/test/cases is replayed by
// each of its evaluators: engine/eval evaluates each case with the engine
// (Policies, EvalRequest, Lookup, Sources, Now); server sends it to a real
// decision server over gRPC (inline policies, or the server's own for the
// CEL kinds, the case's data served by the server's Lookup); webhookproxy sends it as an AdmissionReview through
// the proxy to that server. A runner that cannot express a case (a field
// the API does not carry, a clock it does not fix) lists its note, with the
// reason, in its own testdata/cases-exceptions.yaml; an exception whose
// case passes is an error, so the lists stay true.
//
// Only tests import this package. It depends on the engine packages
// (compiling the policies, the eval.Lookup and kyvernocel.Sources it
// serves) and apimachinery, never on anything outside engine/.
package cases
