// Package leader runs the report writer of one shard of a cluster on the
// replica that holds the shard's Lease (client-go leader election, a
// coordination.k8s.io Lease per shard), with standbys ready to take over.
//
// Read first: Replica (New, Options, Run) and ReportService, the
// service to register on the replica's gRPC server: it serves the writer
// while the replica leads and answers UNAVAILABLE otherwise, so that
// publishers retry until they reach the leader. When a replica starts
// leading, Options.Open opens the shard's store and writer (in a cluster,
// reportwriter/kubestore on a local bbolt file), and Options.Serving turns
// its health to SERVING. When the process stops, the leader drains the
// Publish streams, writes what the writer holds, and only then gives the
// Lease up; when the Lease is lost, it stops at once without writing, as
// another replica may lead already.
//
// The package imports reportwriter (the writer it serves), internal/shard
// and client-go's leader election; it must not import server, client or
// scanner.
package leader
