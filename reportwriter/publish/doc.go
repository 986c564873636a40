// Package publish delivers evaluation results to a report writer.
//
// Start at Publisher: a server.ResultSink (Write never blocks; what does
// not fit its buffer is dropped and counted) that streams items to a
// verdict.v1.ReportService over Publish, in numbered batches, with at most
// Window batches unacknowledged; after a broken stream it reconnects with
// backoff and sends the unacknowledged batches again (the writer's updates
// are idempotent, so a resend changes nothing twice). Scanners use the same
// Publisher through Publish, which takes Publish items (build them with
// Item, or directly as verdictv1.ResourceEvaluation / BackgroundScanDone)
// and waits for room instead of dropping, and Flush.
//
// Sharded holds a Publisher per report writer shard and routes each item
// to the shard of its resource's namespace (reportwriter.ShardOf); policy
// sets go to every shard. ShardAddresses expands an address template with
// {shard}.
//
// Local is the ResultSink of `verdict run`, where the writer lives in the
// same process. WatchPolicies sends the decision server's policy set to
// the writer when it changes and at least every minute, named by the
// server's sender name, and a last one with stopping set when the server
// stops, so that entries of deleted or changed policies go (the writer's
// rule for several servers is in reportwriter's doc.go).
//
// The package imports server (for ResultSink and Evaluation) and
// reportwriter; neither imports it.
package publish
