// Package server is Verdict's gRPC decision service (verdict.v1
// DecisionService): it holds compiled Kyverno policies and evaluates
// resources against them for the webhook proxy, scanners and any other
// client. It is stateless: replicas share nothing and clients balance
// between them.
//
// Read New and Options first, then Run. New builds the gRPC server with its
// interceptor chains (Prometheus metrics, slog logging, panic recovery,
// bearer-token authentication, request validation, a per-call deadline;
// mTLS comes from Options.TLS), the standard health service and server
// reflection. Run starts the policy sources, reports SERVING once every
// source has delivered its policies, and on shutdown reports NOT_SERVING,
// lets calls in flight finish and stops.
//
// The handlers (handlers.go) are thin: check, convert (convert.go), call
// the engine, convert back. Every error becomes a gRPC status in one place,
// toStatus (status.go); INVALID_ARGUMENT carries a google.rpc.BadRequest
// whose field violations name the request field or the policy path, with
// the engine error code as reason.
//
// Policies live in a Store (store.go): the kyverno.io ClusterPolicies,
// Policies and PolicyExceptions, and the policies.kyverno.io
// ValidatingPolicies, NamespacedValidatingPolicies and PolicyExceptions
// (compiled by engine/policy.CompileValidating and engine/vpol, side by
// side with the kyverno.io kinds), the MutatingPolicies and
// NamespacedMutatingPolicies (policy.CompileMutating, engine/mpol), and
// Kubernetes' ValidatingAdmissionPolicies
// and their bindings (engine/vap, policy.CompileVAP). Kubernetes enforces
// ValidatingAdmissionPolicies itself: the server evaluates them in
// background mode only (those labelled reports.kyverno.io/enabled:
// "true"), with the bindings not labelled reports.kyverno.io/disabled, as
// Kyverno's background scans do, so that they reach the reports and never
// a decision. Kubernetes' MutatingAdmissionPolicies are applied by the
// API server and never served (listed as unsupported), so that nothing
// applies them a second time. GeneratingPolicies and DeletingPolicies, and their
// namespaced kinds (gpol.go: engine/gpol and engine/dpol), are served
// too: a GeneratingPolicy's resources are generate intents of the answer
// (the webhook proxy applies them); a DeletingPolicy gives no result on a
// request (verdict cleanup runs it on its schedule). The other Kyverno
// kinds are listed with an "unsupported" error. Requests, GetPolicy and reports name a policy by namespace and
// name, so a ValidatingPolicy or ValidatingAdmissionPolicy with the name
// of a ClusterPolicy (or a NamespacedValidatingPolicy with that of a
// Policy) is not served: it is a duplicate_policy source error. The Store
// is fed by PolicySources: FolderSource
// polls a folder (reading only regular files: a named pipe or device there
// is reported, never opened); a Kubernetes informer source satisfies the same
// interface. A source reports complete snapshots; the Store compiles what
// changed through an LRU of compiled policies keyed by policy identity and
// content hash (cache.go; singleflight on a miss), keeps the last good
// version of a policy whose new version does not compile, and lists the
// errors (ListPolicies, the logs, verdict_policies{state="invalid"} and
// verdict_policy_source_errors). Inline policies sent with a request (the
// kinds above, in any mix, PolicyExceptions included: they apply with the
// server's; inline.go) go through a second cache, keyed by the hash of
// their bytes.
//
// What a client sends is bounded before it costs memory (Options):
// MaxRequestPolicyBytes and MaxRequestPolicyRules limit the inline
// policies or ValidatePolicies documents one request has compiled,
// checked before compiling (a ValidatingPolicy's or an
// ImageValidatingPolicy's validations, a MutatingPolicy's mutations, a
// GeneratingPolicy's generations, a DeletingPolicy's conditions are its
// rules); the inline cache keeps at most InlineCacheBytes of compiled
// policies, measured by memSize without the CEL environments the engine
// shares between policies (sharedMemory, size.go);
// compiling for a request happens within one of the MaxEvaluations slots
// (slots.go), ValidatePolicies included, and a call waiting there or for
// another call's compilation stops at its deadline; the labels of
// verdict_policy_results_total that come from requests (resource kind and
// namespace, inline policy and rule names) make at most MetricsMaxSeries
// series, the rest counted under OverflowLabel (metrics.go), and Kyverno's
// result metrics, whose series follow those of verdict_policy_results_total,
// share the cap (kyverno_metrics.go); the calls
// of one evaluation to the CEL libraries' data sources are at most
// MaxCELDataCalls, and http.* is refused to inline and namespaced
// policies unless CELHTTPInlinePolicies / CELHTTPNamespacedPolicies,
// and the registry calls of an evaluation whose inline policies hold an
// ImageValidatingPolicy unless ImageVerifyInlinePolicies (celguard.go).
//
// The decision follows Kyverno's webhook: a failed rule whose action is
// Enforce denies the request with Kyverno's "resource ... was blocked due
// to the following policies" message; policies with emitWarning produce
// warnings. A ValidatingPolicy decides as Kyverno's vpol webhook does
// (validatingDecision, convert.go): validationActions Deny denies with
// "Policy NAME failed: MESSAGE" (or "error:"), Warn adds the same text as
// a warning, Audit only reports. A MutatingPolicy answers as Kyverno's
// mpol webhook does: its patch joins the response's JSON Patch; an error
// of a policy with failurePolicy Fail denies the request ("Resource:
// NAMESPACE/NAME, Kind: KIND, Errors: [Policy NAME: MESSAGE]", no patch;
// mutatingDecision), one with Ignore lets it in; at admission, policies
// with targetMatchConstraints are skipped (they mutate existing
// resources only; admissionPolicies, handlers.go). In background mode
// a MutatingPolicy patches nothing and fails the resources its mutations
// would still change (the engine's backgroundMutatingPolicies, as
// Kyverno's background scans). Every evaluation can be offered to the
// report writer (Options.Reports, a publish.Sink: the one bounded queue
// of the report path), which never blocks an answer (report.go).
//
// This package imports the engine, the API (proto), publish (the report
// path) and gRPC libraries. It must not import client, webhookproxy,
// reportwriter, scanner or cmd/verdict, and it reads no flags: cmd/verdict turns flags into Options.
package server
