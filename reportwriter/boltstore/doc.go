// Package boltstore is the embedded store of the report writer: one bbolt
// file (go.etcd.io/bbolt) holding the intermediary reports, the final
// reports, the tombstones of deleted resources and the latest policy set
// of each decision server, so that they survive a restart. It is the store of `verdict run` and of
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
// "tombstones" and "meta" (the policy sets under "policysets"; the one set
// of an older writer, "policies", is read once and replaced). The package
// must not depend on the server, client or scanner packages.
//
// # A damaged file
//
// bbolt trusts its file: it maps it and follows the page ids it reads, so
// a truncated or damaged file is a memory fault (SIGBUS, SIGSEGV), one of
// its "assertion failed" panics, or, for a cycle in the tree, a cursor that
// descends until the process runs out of memory. Open therefore checks an
// existing file with ordinary reads before bbolt maps it (check.go: the
// size, the page size, both meta pages: magic, version, checksum; the high
// water mark of the meta in use against the size; the free list's length
// and page ids; then the tree from the root: every page id in use, every
// page reached once and not free, every element, key and value inside its
// page; a read of every page in use), and every call that reads the map
// (Open, Load, Write, Meta, SetMeta) also runs under guard:
// debug.SetPanicOnFault on the calling goroutine (it turns a fault into a
// panic) and a recover. A
// damaged file is then a *CorruptError (errors.Is ErrCorrupt) naming the
// file and what to do: restore it from a backup, or move it away to start
// with an empty store (background scans rebuild the reports of the
// resources they see). An empty file is such an error too, since Open
// creates a new store whole (under a temporary name, then linked into
// place) and never leaves an empty file. Options.Verify also reads every
// page at open and runs bbolt's own check (tx.Check, in a goroutine of
// bbolt's: it runs only after the guarded read of every page succeeded).
// FuzzOpen feeds Open arbitrary files.
package boltstore
