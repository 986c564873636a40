package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of WatchOptions.
const (
	DefaultPolicyInterval = 5 * time.Second
	DefaultPolicyResend   = time.Minute
)

// WatchOptions configure WatchPolicies.
type WatchOptions struct {
	// Sender names this decision server in its policy sets
	// (PolicySet.sender): the writer keeps the latest set of each sender.
	// Default: NewSender().
	Sender string
	// Interval is how often the policies are read; a set that changed is
	// sent. Default 5s.
	Interval time.Duration
	// Resend is how often the set is sent again when it did not change,
	// so that the writer counts the sender as live (keep it well below
	// the writer's PolicySenderTTL, 5m by default). Default 1m.
	Resend time.Duration
}

// NewSender returns a sender name for this process: the host name and a
// random suffix.
func NewSender() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "verdict"
	}
	var b [4]byte
	rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// WatchPolicies reports the policies of a decision server to a report
// writer, so that entries of deleted and changed policies go: once ready
// is closed (the server has loaded its policies), and then every
// interval, it reads the policies and publishes a PolicySet item to sink
// when they changed since the last one sent, or when the last one is
// older than Resend. When ctx is done, it sends a set with stopping (the
// writer no longer counts this server) and returns.
func WatchPolicies(ctx context.Context, ready <-chan struct{}, list PolicyLister, opts WatchOptions, sink Sink, log *slog.Logger) {
	if opts.Interval <= 0 {
		opts.Interval = DefaultPolicyInterval
	}
	if opts.Resend <= 0 {
		opts.Resend = DefaultPolicyResend
	}
	if opts.Sender == "" {
		opts.Sender = NewSender()
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	var last *verdictv1.PublishItem
	var lastSent time.Time
	t := time.NewTicker(opts.Interval)
	defer t.Stop()
	for {
		it, err := PolicySet(ctx, list, timestamppb.Now)
		switch {
		case err != nil:
			log.Warn("read policies for reports", "error", err)
		case !samePolicies(last, it) || time.Since(lastSent) >= opts.Resend:
			it.GetPolicySet().Sender = opts.Sender
			if err := sink.Publish(ctx, it); err != nil {
				log.Warn("send policies to the report writer", "error", err)
			} else {
				last, lastSent = it, time.Now()
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			if last != nil {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				stop := &verdictv1.PolicySet{Time: timestamppb.Now(), Sender: opts.Sender, Stopping: true}
				if err := sink.Publish(sctx, &verdictv1.PublishItem{Item: &verdictv1.PublishItem_PolicySet{PolicySet: stop}}); err != nil {
					log.Warn("tell the report writer this server stops", "error", err)
				}
				cancel()
			}
			return
		}
	}
}
