package reportwriter

import (
	"context"
	"time"

	"github.com/verdict-policy/verdict/internal/shard"
)

// Store keeps the writer's state durably. The writer calls Load once at
// start, then Write from one goroutine, once per flush: a Write is one
// transaction, applied entirely or not at all.
//
// The embedded store (package reportwriter/boltstore) keeps everything in
// one bbolt file. A Kubernetes store writes the final reports as
// wgpolicyk8s.io objects and keeps the rest elsewhere.
type Store interface {
	// Load returns everything written so far.
	Load(ctx context.Context) (*State, error)
	// Write applies c in one transaction.
	Write(ctx context.Context, c *Changes) error
	// Close releases the store.
	Close() error
}

// DeferredStore is a Store whose Write returns before all of the write is
// durable where a standby replica reads it from: the Kubernetes store
// (reportwriter/kubestore) keeps the write in a local file at once and
// applies the final reports and tombstones to the API server later,
// coalesced. With such a store the writer holds the acknowledgement of a
// batch until WaitDurable, called after the batch's final reports were
// written, returns.
type DeferredStore interface {
	Store
	// WaitDurable returns nil once everything written by the Writes that
	// returned before the call is durable, or an error when ctx is done
	// or the store is closed first.
	WaitDurable(ctx context.Context) error
}

// ReportReader is a Store that reads back the final reports it holds
// (the embedded store, and the Kubernetes store from its local file). With
// one, the writer keeps only what tables need of each report (StoredReport
// without Report) and reads a report's JSON from the store when asked for
// it (GetReport), instead of holding the JSON of every report in memory.
type ReportReader interface {
	Store
	// ReadReport returns the JSON of final report k as last written, or
	// nil when the store holds no such report.
	ReadReport(ctx context.Context, k ReportKey) ([]byte, error)
}

// State is the content of a store.
type State struct {
	Intermediaries []*Intermediary
	Reports        []*StoredReport
	Tombstones     map[string]time.Time // by resource key
	Policies       *PolicySets          // nil when none was received
}

// Changes are the writes of one flush.
type Changes struct {
	// Intermediaries to write, and to delete (by source and resource key).
	PutIntermediaries    []*Intermediary
	DeleteIntermediaries []IntermediaryKey
	// Final reports to write, and to delete.
	PutReports    []*StoredReport
	DeleteReports []ReportKey
	// Tombstones of deleted resources to write, and to forget.
	PutTombstones    map[string]time.Time
	DeleteTombstones []string
	// Policies replaces the stored policy sets when not nil.
	Policies *PolicySets
}

// IntermediaryKey names an intermediary report.
type IntermediaryKey struct {
	Source   Source
	Resource string // Resource.Key()
}

// Empty reports whether c writes nothing.
func (c *Changes) Empty() bool {
	return len(c.PutIntermediaries) == 0 && len(c.DeleteIntermediaries) == 0 &&
		len(c.PutReports) == 0 && len(c.DeleteReports) == 0 &&
		len(c.PutTombstones) == 0 && len(c.DeleteTombstones) == 0 && c.Policies == nil
}

// ShardOf is the shard of a namespace among n shards: the FNV-1a 32-bit
// hash of the namespace name modulo n (cluster-scoped resources have the
// namespace ""). Scanners and writers shard by it; BackgroundScanDone
// scopes use it.
func ShardOf(namespace string, n uint32) uint32 { return shard.Of(namespace, n) }
