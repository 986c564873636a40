package scanner

import (
	"context"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// ReportSink returns the ResultSink of a report writer: each result
// becomes the item of a background evaluation (publish.Item: a resource
// the server could not evaluate has none, a deleted one removes its
// entries), published to q waiting for room; the end of a scan publishes
// the shard's scan marker and waits until q's writer acknowledged
// everything.
func ReportSink(q publish.Sink) ResultSink { return reportSink{q: q} }

type reportSink struct{ q publish.Sink }

func (s reportSink) Write(ctx context.Context, rs []Result) error {
	items := make([]*verdictv1.PublishItem, 0, len(rs))
	for _, r := range rs {
		ev := publish.Evaluation{
			Resource:   publish.Resource(r.Resource),
			Background: true,
			Time:       r.Time,
			Complete:   r.AllPolicies,
			Deleted:    r.Deleted,
			Response:   r.Response,
		}
		if r.Err != nil {
			ev.Response = nil // counted by the scan; nothing to report
		}
		if it := publish.Item(ev); it != nil {
			items = append(items, it)
		}
	}
	return s.q.Publish(ctx, items...)
}

func (s reportSink) ScanDone(ctx context.Context, d ScanDone) error {
	done := publish.ScanDone{Started: d.Started, ShardIndex: d.Shard.Index, ShardCount: d.Shard.Count, Kinds: d.Kinds}
	for _, r := range d.Seen {
		done.Seen = append(done.Seen, publish.Resource(r))
	}
	if err := s.q.Publish(ctx, done.Item()); err != nil {
		return err
	}
	return s.q.Flush(ctx)
}
