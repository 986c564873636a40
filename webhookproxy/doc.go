// Package webhookproxy is the HTTPS admission webhook of Verdict: it takes
// an admission.k8s.io/v1 AdmissionReview from the Kubernetes API server,
// turns it into one Evaluate call of the decision service, and turns the
// answer back into an AdmissionResponse.
//
// It holds no policy logic. The decision server builds Kyverno's deny
// message, the warnings and the JSON patch (for the kyverno.io kinds,
// for ValidatingPolicies: Deny denies, Warn warns, Audit only reports,
// and for MutatingPolicies: their patch, and a denial for an error under
// failurePolicy Fail); this package only copies them:
//
//   - /validate answers allowed or denied (with the server's message) and
//     the server's warnings;
//   - /mutate answers allowed with the server's JSON patch
//     (patchType: JSONPatch); it never denies on a policy result, because
//     the API server calls the validating webhook with the mutated object
//     afterwards, and it carries no warnings, so that a warning is shown
//     once.
//
// Each has a path per failure policy, as Kyverno registers its webhooks:
// /validate/fail and /mutate/fail evaluate only the policies whose
// failurePolicy is Fail (a PolicySelector with failure_policy), and deny
// when no decision can be made; /validate/ignore and /mutate/ignore the
// Ignore ones, and allow. /validate and /mutate evaluate every policy and
// fail as Options.FailOpen says.
//
// Read first: Handler (New, Options, the routes), RequestFromAdmission and
// ResponseFromDecision (the translation both ways: the request's kind,
// resource and subresource go to the server as the API server sent them,
// the kind of a subresource of a built-in resource as its parent's), decodeReview (the
// one-pass AdmissionReview decoder), Decider (what the handler calls;
// client.Client satisfies it), NamespaceLabels (labels for
// namespaceSelector: NamespaceCache is the informer-backed one,
// MapNamespaceLabels the static one), Generator and Applier (generate
// intents written with server-side apply, after the answer; the intents
// that fail go to ApplierOptions.Failed with their Trigger, for Kyverno's
// PolicyError events, which the command emits), CertReloader
// and SelfSigned (TLS), and Serve.
//
// When no decision can be made (no server answers, the deadline passes,
// the namespace cache is not synced) the request is denied or allowed as
// the path's failure policy says, always with a message (status message
// when denied, a warning when allowed) and counted in
// verdict_webhook_decider_failures_total.
//
// Besides its verdict_webhook_* metrics, the handler exports those of
// Kyverno's webhook server with Kyverno's names and labels
// (kyverno_metrics.go): kyverno_admission_requests_total,
// kyverno_admission_review_duration_seconds and kyverno_http_requests_*;
// their kind and namespace pairs are capped by Options.MetricsMaxSeries
// and filtered by Options.MetricsNamespaces.
//
// Depends on proto, internal/options, internal/promreg, internal/safefile
// (the TLS files) and client-side
// types only (gRPC, k8s.io/api, client-go, Prometheus); never on server or
// engine. It never blocks an admission answer on a write to the cluster.
package webhookproxy
