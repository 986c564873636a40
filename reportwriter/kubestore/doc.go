// Package kubestore is the report writer's store in a cluster: the final
// reports are wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport
// objects (openreports.io/v1alpha1 Report and ClusterReport with
// Options.OpenReports: same names, labels and content) written through the
// API server, and everything else (the
// intermediary reports, the tombstones of deleted resources, the policy
// set, and a copy of the final reports) stays in a local bbolt file
// (reportwriter/boltstore), one per shard, so that etcd holds no
// intermediary objects.
//
// Read first: Open and Options, Store (a reportwriter.Store: Load, Write,
// Close, plus Flush), and the apply loop in apply.go.
//
// # Writes
//
// Write is one bbolt transaction; the reports it changes are then applied
// to the API server by one goroutine, at most once per report per
// FlushInterval (server-side apply, field manager "verdict", forced): a
// report changed by many Writes within an interval is applied once, with
// its latest content, read from the local file when it is applied (the
// store holds the JSON of the reports being applied only). A failed apply (conflict, timeout, API server down)
// is retried with backoff, always from the latest content. A report larger
// than MaxReportBytes is split into parts named <name>, <name>-2, <name>-3,
// ... labelled reports.verdict.io/report=<name>; parts no longer needed are
// deleted. Reports of namespaces outside the store's shard are never
// written or deleted. Every API write is counted in
// verdict_reports_api_writes_total{verb,kind}.
//
// # Durability and failover
//
// The store is a reportwriter.DeferredStore: WaitDurable returns once the
// reports of every Write before it are applied (each Write is numbered;
// each pending report remembers the first Write not applied yet), so the
// writer acknowledges a batch only when a standby would see it. The
// tombstones of deleted resources are handed over too: with
// TombstoneName set, they are applied, coalesced in the same rounds, as
// the annotation reports.verdict.io/tombstones of a coordination.k8s.io
// Lease (newest first, at most MaxTombstoneBytes), and Load merges that
// annotation into the file's tombstones, so that a standby refuses late
// resends of older evaluations of deleted resources.
//
// # Load
//
// The store records, in the bbolt file, the content hash of every report
// it applied; each object carries it in the annotation
// reports.verdict.io/content-hash. At Load, when the shard's objects in
// the API server are the ones the file recorded (the same writer wrote
// them last), the file's state is used and what it had not applied yet is
// applied. Otherwise (a fresh volume, or another replica led the shard
// since) the intermediary reports are rebuilt from the shard's objects,
// which hold every current entry, and the file is replaced by them.
// Load also deletes the shard's Verdict objects of the other API group
// (left by a writer before a switch of OpenReports); when the chosen group
// has none yet, the state is rebuilt from those first, and every report is
// applied again in the chosen group.
//
// The package must not import server, client or scanner.
package kubestore
