package publish

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/server"
)

// Applier applies a batch of items durably; *reportwriter.Writer is one.
type Applier interface {
	Apply(ctx context.Context, items []*verdictv1.PublishItem) (reportwriter.Result, error)
}

// Local is a server.ResultSink that hands evaluations to a report writer in
// the same process (verdict run): each Write is applied and durable when
// it returns.
type Local struct {
	Writer Applier
}

var _ server.ResultSink = Local{}

// Write implements server.ResultSink.
func (l Local) Write(ctx context.Context, batch []server.Evaluation) error {
	items := Items(batch)
	if len(items) == 0 {
		return nil
	}
	_, err := l.Writer.Apply(ctx, items)
	return err
}

// DefaultPolicyInterval is the default interval of WatchPolicies.
const DefaultPolicyInterval = 5 * time.Second

// WatchPolicies reports the policies of a decision server to a report
// writer, so that entries of deleted and changed policies go: once ready
// is closed (the server has loaded its policies), and then every interval
// (default 5s), it reads the policies and sends a PolicySet item through
// send when they changed since the last one sent. It returns when ctx is
// done.
func WatchPolicies(ctx context.Context, ready <-chan struct{}, list PolicyLister, interval time.Duration, send func(context.Context, *verdictv1.PublishItem) error, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultPolicyInterval
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	var last *verdictv1.PublishItem
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		it, err := PolicySet(ctx, list, timestamppb.Now)
		switch {
		case err != nil:
			log.Warn("read policies for reports", "error", err)
		case !samePolicies(last, it):
			if err := send(ctx, it); err != nil {
				log.Warn("send policies to the report writer", "error", err)
			} else {
				last = it
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// ApplyItem adapts an Applier to the send function of WatchPolicies.
func ApplyItem(a Applier) func(context.Context, *verdictv1.PublishItem) error {
	return func(ctx context.Context, it *verdictv1.PublishItem) error {
		_, err := a.Apply(ctx, []*verdictv1.PublishItem{it})
		return err
	}
}

// PublishItem adapts a Publisher to the send function of WatchPolicies.
func PublishItem(p *Publisher) func(context.Context, *verdictv1.PublishItem) error {
	return func(ctx context.Context, it *verdictv1.PublishItem) error { return p.Publish(ctx, it) }
}
