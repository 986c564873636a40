package server

import (
	"context"
)

// PolicySource feeds policy documents to a Store. A folder (FolderSource)
// and a Kubernetes informer are sources.
//
// A source reports complete snapshots, not changes: the Store compares each
// snapshot with the previous one of the same source, compiles what changed
// (through its cache, so an unchanged document is never compiled twice) and
// keeps the last good version of a policy whose new version does not
// compile.
type PolicySource interface {
	// Name identifies the source in logs and snapshots
	// ("folder examples/policies", "kubernetes"). Names are unique within a
	// Store.
	Name() string
	// Run calls update with the source's complete state: once as soon as
	// the source has read everything, then after every change. It returns
	// nil when ctx is done, or an error when the source cannot work at all.
	// update is not called concurrently by one source.
	Run(ctx context.Context, update func(Snapshot)) error
}

// Snapshot is the complete state of a policy source.
type Snapshot struct {
	// Documents are the documents the source holds, in a stable order.
	Documents []Document
	// Errors are the origins the source could not read this time. The
	// Store keeps the documents that came from these origins before.
	Errors []SourceError
}

// Document is one policy document of a source.
type Document struct {
	// Origin is where the document comes from: a file path, or an object
	// reference such as "kubernetes:ClusterPolicy/name". Documents of one
	// file share its Origin.
	Origin string
	// Line is the 1-based line of Origin where the document starts; 0 when
	// the origin has no lines.
	Line int
	// JSON is the document as JSON. Documents that are not kyverno.io
	// ClusterPolicies or Policies are ignored by the Store, except other
	// Kyverno policy kinds, which are listed as unsupported.
	JSON []byte
}

// SourceError says that an origin could not be read.
type SourceError struct {
	Origin string
	Err    error
}

func (e SourceError) Error() string { return e.Origin + ": " + e.Err.Error() }
