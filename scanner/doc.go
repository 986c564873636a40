// Package scanner is Verdict's background scanner: it sends stored
// resources (from a cluster, or from files) to a decision server in
// background mode, in batches over EvaluateStream, and hands the results
// to a ResultSink (the report writer, or a printer). It also replays
// generateExisting policies for the triggers that already exist and
// writes what they generate.
//
// Read first: Scanner (New, Options, Scan, Run), Source and Visitor (where
// resources come from: FileSource for files, Cluster.Source for a cluster
// listed through client-go, Cluster.SelectedSource for one namespace or a
// label selector, which verdict apply --cluster uses), ResultSink and ScanDone (where results go, and
// the per-shard "scan finished" marker that tells which resources are
// gone; ReportSink sends both to a report writer through publish), Shard
// (the split of a cluster between scanners by namespace hash), PolicySet
// and LoadPolicies (what the server's policies match: the scan scopes of
// ListPolicies, which the server computes from its compiled policies, so
// the scanner compiles nothing), and Generator
// (server-side apply of generateExisting intents, recorded on the
// trigger so that they are applied once per policy version). Watch scans
// a cluster and then follows it with client-go informers: changed
// resources are evaluated in rounds, deleted ones reported as Results
// with Deleted.
//
// A FileSource reads only regular files (a named pipe, device or socket in
// a folder is skipped with a warning to FileOptions.Logger; one named is an
// error) one document at a time, with a limit on one document
// (FileOptions.MaxDocumentBytes): it keeps the namespace labels and the
// count of resources per namespace and kind, not the resources, so a scan
// of files holds the documents in flight. Its reads return when the scan's
// context ends, so that SIGTERM stops a scan at once.
//
// Background semantics are the server's: a request in MODE_BACKGROUND
// skips policies with background: false (for a ValidatingPolicy,
// evaluation.background.enabled: false; a Kubernetes
// ValidatingAdmissionPolicy is scanned only when labelled
// reports.kyverno.io/enabled: "true", as Kyverno's reports controller
// does) and rules that read userInfo, roles or subjects, and never denies;
// a MutatingPolicy with evaluation.background.enabled reports whether its
// mutations have been applied ("mutation is not applied" fails, as in
// Kyverno) and patches nothing. The kinds LoadPolicies lists come from the
// server's scan scopes (engine/policy's Scopes): the match blocks of the
// kyverno.io kinds and the resourceRules of the ValidatingPolicies,
// MutatingPolicies and ImageValidatingPolicies (their autogen variants
// included) and ValidatingAdmissionPolicies (a resource selector is
// matched by plural resource name), and the triggers of GeneratingPolicies
// with generateExisting from their resourceRules. The scanner
// supplies what a stored resource gives: the object, its namespace and
// that namespace's labels, and for a resource listed from a cluster the
// API resource it was listed from (Resource.GVR: the resourceRules of
// ValidatingPolicies match the plural the cluster serves; for files the
// server guesses it from the kind).
//
// This package uses the client (never the server package), the engine
// (to decode resource files), publish (the report path: items and the queue to
// the report writer) and client-go; it must not import server,
// reportwriter or webhookproxy. It keeps no global state and writes to a cluster only
// through a Generator (whose failures go to GeneratorOptions.Failed, for
// Kyverno's PolicyError events, which the command emits).
package scanner
