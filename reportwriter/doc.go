// Package reportwriter keeps Kyverno policy reports: it consumes the
// results of evaluations (admission requests from decision servers,
// background scans from scanners), keeps intermediary reports per resource
// and source, and aggregates them into final wgpolicyk8s.io/v1alpha2
// PolicyReports and ClusterPolicyReports.
//
// Read first: Writer (New, Apply, and the verdict.v1.ReportService it
// implements: Publish, ListReports, GetReport), Intermediary (the content
// of Kyverno's AdmissionReport / BackgroundScanReport), PolicyReport (a
// final report) and Store (where state is kept; the embedded bbolt store is
// reportwriter/boltstore, the store of a cluster (PolicyReport objects, or
// openreports.io Report objects) is reportwriter/kubestore, the leader
// election of a shard's replicas is reportwriter/leader, the Kubernetes
// Events of the results are internal/kubeevents, which Options.Events
// hands each applied evaluation to; the queue that feeds a writer is the
// package publish, on the other side of the API).
//
// # Model
//
// Each resource (keyed by UID, or by apiVersion/kind/namespace/name when it
// has none) has up to two intermediary reports: admission and background.
// An evaluation replaces, in the intermediary of its source, the entries of
// each policy it lists, when it is newer than the evaluation that gave
// them; an evaluation that covered every policy of its sender (complete)
// also removes the older entries of the policies it does not list. Older
// evaluations and evaluations applied twice change nothing, so delivery
// may be at least once.
//
// The final report of a policy in a namespace, "cpol-<name>" (ClusterPolicy),
// "pol-<name>" (Policy), "vpol-<name>" (ValidatingPolicy), "nvpol-<name>"
// (NamespacedValidatingPolicy), "vap-<name>" (Kubernetes
// ValidatingAdmissionPolicy), "mpol-<name>" (MutatingPolicy),
// "nmpol-<name>" (NamespacedMutatingPolicy), "ivpol-<name>"
// (ImageValidatingPolicy), "nivpol-<name>"
// (NamespacedImageValidatingPolicy), "gpol-<name>" or "ngpol-<name>"
// (GeneratingPolicy and its namespaced kind: source
// "KyvernoGeneratingPolicy", rule the policy's name), holds, for each resource, the entries of the
// policy from whichever source evaluated it last (admission or background:
// the later one wins). Cluster-scoped resources go to ClusterPolicyReports.
// Each result names one resource, as Kyverno's (Options.GroupResults: one
// result per outcome of a rule, listing its resources).
// Results are written as Kyverno 1.19 writes them: source "kyverno" for the
// kyverno.io kinds, "KyvernoValidatingPolicy" for the ValidatingPolicy
// kinds (whose validations have an empty rule name),
// "KyvernoMutatingPolicy" for the MutatingPolicy kinds (whose mutations
// have an empty rule name), "KyvernoImageValidatingPolicy" for the
// ImageValidatingPolicy kinds (rule: the policy's name),
// "ValidatingAdmissionPolicy" for ValidatingAdmissionPolicies (rule: the
// policy's name; property "binding": the binding evaluated), the policy
// named "namespace/name" for the namespaced kinds, and Kyverno's policy
// label (cpol.kyverno.io/, pol.kyverno.io/, vpol.kyverno.io/,
// mpol.kyverno.io/, ivpol.kyverno.io/, validatingadmissionpolicy.apiserver.io/<name>).
//
// # What is reported (guides/reports.md)
//
//   - A denied admission request, a dry run and CONNECT change nothing: the
//     resource was not created or changed. So an Enforce policy reports
//     only what passes for new resources; Audit reports everything.
//   - Background scans report every policy with background: true; results of
//     a policy with background: false from a background scan are dropped,
//     so such a policy reports only from admission.
//   - A DELETE, admission or background (a scanner's watch saw the
//     resource go), removes every entry of the resource; a finished
//     background scan (BackgroundScanDone) removes the resources of its
//     scope that it did not see. A tombstone keeps resent older
//     evaluations from bringing them back (TombstoneTTL).
//   - Policies the decision servers no longer have: see below.
//
// # Policies the servers no longer have (policies.go)
//
// Each decision server (sender) sends its PolicySet, named by
// PolicySet.sender, when it changes, at least every minute, and one with
// stopping set when it stops. The writer keeps the latest set of each
// sender; a sender is live until it stops or PolicySenderTTL (5m) passes
// without a set from it (at most MaxPolicySenders, 256, are live). The
// rule, for several replicas or a restart with another --policies folder:
//
//   - the entries of a policy that no live sender lists go (and those from
//     background scans when no live sender has it with background: true);
//     for a policy whose content hash no live sender has, the entries of
//     rules that no live sender has go; the other entries of a changed
//     policy stay until the resource is evaluated again;
//   - only entries older than the horizon go, the oldest set of the live
//     senders: every live sender has said since that it does not hold the
//     policy (a newer entry, of a policy a sender has just added and not
//     reported yet, stays until the horizon passes it);
//   - with no live sender (the only server stopped or restarting), nothing
//     goes.
//
// # Time
//
// The times publishers send (ResourceEvaluation.time, from which entries
// and tombstones take theirs, BackgroundScanDone.started, PolicySet.time)
// are compared with later ones to order updates, so one in the future
// would make every later item look older, forever. An item whose time is
// later than the writer's clock plus MaxClockSkew (5m) is rejected (the
// field and the skew named in the acknowledgement), counted
// (verdict_reports_future_time_rejected_total{field}) and never stored.
// A store written before that check may hold such times: New removes them
// at start (the policy sets, the entries and Complete marks, the
// tombstones; logged, and counted in
// verdict_reports_future_time_repaired_total{what}); senders send their
// sets again within a minute, the next evaluation of a resource brings its
// entries back.
//
// # Limits a publisher controls
//
// Per stream: MaxBatchItems, MaxMessageBytes (so the results, policies
// and seen resources of one item), MaxUnacked. Overall: MaxInflightBytes
// of batches received and not acknowledged (a stream waits for room;
// verdict_reports_inflight_bytes; a sender that does not read its
// acknowledgements would hold them, so its stream ends after AckTimeout),
// MaxResources
// resources with entries, MaxTombstones deleted resources remembered,
// MaxPolicySenders live senders; an item over one of them is rejected and
// counted (verdict_reports_items_over_limit_total{limit}). A deletion of a
// resource held, over MaxTombstones, still removes its entries, without a
// tombstone (verdict_reports_tombstones_skipped_total). Namespaces and
// final reports are bounded through the resources (one report per
// policy and namespace with a resource).
//
// # Writes
//
// One goroutine applies batches and writes their changes in one store
// transaction per flush (bounded by MaxFlushItems), then acknowledges
// them. The changed final reports are rendered and written every
// ReportInterval, in transactions of MaxReportWriteBytes of JSON each;
// the writer keeps no report's JSON (a SHA-256 of its last rendering
// tells whether it changed), and reads it from a ReportReader store
// for GetReport. With a DeferredStore (the Kubernetes store, whose final reports
// become durable where a standby reads them only once applied to the API
// server) the acknowledgements are held instead: after the next write of
// the final reports (ReportInterval), until the store's WaitDurable
// returns; a batch that changed nothing waits too, as it may be the
// resend of one not durable yet. A Publish stream keeps receiving and
// applying meanwhile and sends the acknowledgements in order, so a sender
// has up to MaxUnacked batches in flight. Limits (MaxBatchItems,
// MaxMessageBytes, MaxUnacked) end a Publish stream with RESOURCE_EXHAUSTED
// naming the limit; invalid items (and items over the limits above) are
// rejected by index and field in the acknowledgement.
//
// The package must not import server, client or scanner; it knows the
// decision server only through the verdict.v1 messages.
package reportwriter
