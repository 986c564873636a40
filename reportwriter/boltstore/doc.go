// Package boltstore is the embedded store of the report writer: one bbolt
// file (go.etcd.io/bbolt) holding the intermediary reports, the final
// reports, the tombstones of deleted resources and the latest policy set,
// so that they survive a restart. It is the store of `verdict run` and of
// `verdict reports serve --store FILE`.
//
// Start at Open; the *Store implements reportwriter.Store. Each Write is
// one bbolt transaction (one fsync), so the writer batches its changes
// into few, larger writes. The file is locked while open: a second process
// opening it waits Options.LockTimeout, then fails.
//
// Records are JSON, in the buckets "intermediaries" (key
// "<source>/<resource key>"), "reports" and "reportdata" (a report's
// summary, and the report object as is; key "<namespace>/<name>"),
// "tombstones" and "meta". The package must not depend on the server,
// client or scanner packages.
package boltstore
