// Package webhookproxy is the HTTPS admission webhook of Verdict: it takes
// an admission.k8s.io/v1 AdmissionReview from the Kubernetes API server,
// turns it into one Evaluate call of the decision service, and turns the
// answer back into an AdmissionResponse.
//
// It holds no policy logic. The decision server builds Kyverno's deny
// message, the warnings and the JSON patch; this package only copies them:
//
//   - /validate answers allowed or denied (with the server's message) and
//     the server's warnings;
//   - /mutate answers allowed with the server's JSON patch
//     (patchType: JSONPatch); it never denies on a policy result, because
//     the API server calls the validating webhook with the mutated object
//     afterwards, and it carries no warnings, so that a warning is shown
//     once.
//
// Read first: Handler (New, Options), RequestFromAdmission and
// ResponseFromDecision (the translation both ways), Decider (what the
// handler calls; client.Client satisfies it), NamespaceLabels (labels for
// namespaceSelector; MapNamespaceLabels is the static implementation, an
// informer-backed one is to come), CertReloader and SelfSigned (TLS), and
// Serve.
//
// When the Decider fails (no server answers, the deadline passes, the
// namespace labels cannot be read) the request is denied or allowed as
// Options.FailOpen says, always with a message (status message when
// denied, a warning when allowed) and counted in
// verdict_webhook_decider_failures_total.
//
// Depends on proto and client-side types only (gRPC, k8s.io/api admission
// types, Prometheus); never on server or engine.
package webhookproxy
