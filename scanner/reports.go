package scanner

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/verdict-policy/verdict/internal/strtable"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// ReportSink returns the ResultSink of a report writer: each result
// becomes the item of a background evaluation (publish.Item: a resource
// the server could not evaluate has none, a deleted one removes its
// entries), published to q waiting for room; the end of a scan publishes
// the shard's scan marker and waits until q's writer acknowledged
// everything.
//
// The queue keeps each item until the writer acknowledges it, which in a
// cluster is once its reports are applied: a whole scan can be held at
// once. So that the items cost what they say, not what each answer
// decoded, items with the policies of the previous item share its list,
// and the strings that repeat across results (policy, rule, message,
// category, severity) share one copy each.
func ReportSink(q publish.Sink) ResultSink { return &reportSink{q: q} }

// reportSink's fields are used from Write's goroutine only (ResultSink:
// one goroutine).
type reportSink struct {
	q publish.Sink
	// policies is the policy list of the previous item.
	policies []*verdictv1.PolicyVersion
	strs     strtable.Table
}

func (s *reportSink) Write(ctx context.Context, rs []Result) error {
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
			s.share(it.GetEvaluation())
			items = append(items, it)
		}
	}
	return s.q.Publish(ctx, items...)
}

// share points ev at the shared policy list and strings (see ReportSink).
// The results are the server's answer's, which the scan hands over to the
// sink: their strings are replaced by equal ones, which changes no value.
func (s *reportSink) share(ev *verdictv1.ResourceEvaluation) {
	if ev == nil {
		return
	}
	if samePolicies(ev.Policies, s.policies) {
		ev.Policies = s.policies
	} else if len(ev.Policies) > 0 {
		s.policies = ev.Policies
	}
	for _, r := range ev.Results {
		r.Policy, r.PolicyNamespace, r.Rule = s.strs.Of(r.Policy), s.strs.Of(r.PolicyNamespace), s.strs.Of(r.Rule)
		r.Message, r.Category, r.Severity = s.strs.Of(r.Message), s.strs.Of(r.Category), s.strs.Of(r.Severity)
	}
}

func samePolicies(a, b []*verdictv1.PolicyVersion) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func (s *reportSink) ScanDone(ctx context.Context, d ScanDone) error {
	done := publish.ScanDone{Started: d.Started, ShardIndex: d.Shard.Index, ShardCount: d.Shard.Count, Kinds: d.Kinds}
	for _, r := range d.Seen {
		done.Seen = append(done.Seen, publish.Resource(r))
	}
	if err := s.q.Publish(ctx, done.Item()); err != nil {
		return err
	}
	return s.q.Flush(ctx)
}
