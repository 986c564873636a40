// Package publish is the report path: it owns everything between an
// evaluation and the report writer.
//
// One builder: Item turns an Evaluation (an admission the decision server
// answered, or a resource a background scan evaluated) into a Publish
// item; ScanDone.Item and PolicySet build the other two kinds of item.
// Nothing else builds evaluation items.
//
// One interface: a Sink takes the items. The decision server offers the
// item of each evaluation (Offer never waits: an admission answer must
// not); a scanner publishes (Publish waits for room: back-pressure) and
// flushes at the end of a scan.
//
// One bounded queue: a Publisher holds the items in one buffer of
// Options.Buffer items (10,000 by default) and hands them, in numbered
// batches, to the writer: New streams them to a verdict.v1.ReportService
// over Publish, with at most Window batches unacknowledged, and sends
// the unacknowledged ones again on a new stream after a broken one (with
// backoff); NewLocal applies them to a writer in the same process
// (verdict run). A batch leaves the queue when the writer acknowledges
// it as durable (the writer's updates are idempotent, so a resend changes
// nothing twice). What is lost is counted, once, where it is lost: an
// item Offer has no room for (verdict_report_publisher_undelivered_total;
// the decision server also counts the evaluation in
// verdict_results_dropped_total and logs it), and items still queued or
// unacknowledged when Close gives up (undelivered_total). Publish never
// drops.
//
// Sharded holds a Publisher per report writer shard and routes each item
// to the shard of its resource's namespace (internal/shard); policy sets
// go to every shard. ShardAddresses expands an address template with
// {shard}. WatchPolicies sends the decision server's policy set to the
// writer when it changes and at least every minute, named by the server's
// sender name, and a last one with stopping set when the server stops, so
// that entries of deleted or changed policies go (the writer's rule for
// several servers is in reportwriter's doc.go).
//
// The package imports the API (proto), gRPC, Prometheus, internal/shard and
// the policy kind names of engine/kyverno and engine/vpol. It must not
// import server, scanner, reportwriter or client: the decision server and
// the scanner import it, and the report writer is on the other side of
// the API.
package publish
