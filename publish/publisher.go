package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/verdict-policy/verdict/internal/ctxtime"
	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/promreg"
	"github.com/verdict-policy/verdict/internal/streamrecv"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of Options.
const (
	DefaultWindow        = 32
	DefaultMaxBatchItems = 500
	DefaultBuffer        = 10000
	DefaultBackoffMin    = 100 * time.Millisecond
	DefaultBackoffMax    = 10 * time.Second
)

// Options configure a Publisher. Every field has a default.
type Options struct {
	// Window is the most batches sent and not yet acknowledged (the
	// resend window); keep it at most the writer's MaxUnacked. NewLocal
	// sets it to 1. A writer in
	// a cluster acknowledges a batch once its reports are applied to the
	// API server (about its report interval plus its flush interval, 2s
	// by default), so a stream carries at most Window × MaxBatchItems
	// items per that time. Default 32 (8,000 items/s with the defaults).
	Window int
	// MaxBatchItems is the most items of one batch; keep it at most the
	// writer's MaxBatchItems. Default 500.
	MaxBatchItems int
	// Buffer is the most items waiting to be sent: the one queue between
	// the evaluations and the writer. Offer drops (and counts) what does
	// not fit; Publish waits for room. Default 10000.
	Buffer int
	// BackoffMin and BackoffMax bound the wait before reconnecting after
	// a broken stream; it doubles from min to max, and is reset by an
	// acknowledgement. Defaults 100ms and 10s.
	BackoffMin, BackoffMax time.Duration
	// Logger receives the publisher's logs. Default: discard.
	Logger *slog.Logger
	// Registry receives the publisher's metrics. Default: a new registry.
	Registry *prometheus.Registry
	// Registerer, when set, receives the metrics instead of Registry
	// (Sharded registers each shard's publisher with a shard label).
	Registerer prometheus.Registerer
}

func (o Options) withDefaults() Options {
	options.Positive(&o.Window, DefaultWindow)
	options.Positive(&o.MaxBatchItems, DefaultMaxBatchItems)
	options.Positive(&o.Buffer, DefaultBuffer)
	options.Positive(&o.BackoffMin, DefaultBackoffMin)
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(DefaultBackoffMax, o.BackoffMin)
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	return o
}

// Errors of Offer and Publish.
var (
	// ErrClosed is returned by Offer and Publish after Close.
	ErrClosed = errors.New("publisher closed")
	// ErrFull is wrapped by the error of Offer when the buffer is full.
	ErrFull = errors.New("report publisher buffer full")
)

// Sink takes the items of the report path (see Item) to one report
// writer or to the writers of every shard: Publisher and Sharded are
// Sinks. A decision server offers the item of each evaluation; a scanner
// publishes its results, waiting for room, and flushes at the end of a
// scan.
type Sink interface {
	// Offer queues items without waiting: what does not fit is dropped,
	// counted and returned as an error.
	Offer(items ...*verdictv1.PublishItem) error
	// Publish queues items, waiting for room until ctx is done.
	Publish(ctx context.Context, items ...*verdictv1.PublishItem) error
	// Flush waits until every item queued so far is acknowledged.
	Flush(ctx context.Context) error
	// Close delivers what is queued, until ctx is done, and stops.
	Close(ctx context.Context) error
}

// Applier applies a batch of items durably; *reportwriter.Writer is one.
type Applier interface {
	Apply(ctx context.Context, items []*verdictv1.PublishItem) (ApplyResult, error)
}

// ApplyResult is what an Applier reports of a batch it applied.
type ApplyResult struct {
	// Rejected lists the items that were not valid and not applied.
	Rejected []*verdictv1.PublishRejection
	// Duplicates counts the items that changed nothing.
	Duplicates int
}

// Publisher is the one bounded queue between the evaluations and a report
// writer. It batches the items queued (Offer, Publish), hands at most
// Window batches at a time to the writer, keeps each until the writer
// acknowledges it (durable), hands it again after a failure (with
// backoff), and counts what it could not deliver. New streams the batches
// to a ReportService over Publish; NewLocal applies them to a writer in the
// same process (verdict run).
type Publisher struct {
	client  verdictv1.ReportServiceClient // New
	local   Applier                       // NewLocal
	opts    Options
	log     *slog.Logger
	metrics *pubMetrics

	mu       sync.Mutex
	queue    []*verdictv1.PublishItem // not in a batch yet
	inflight []*verdictv1.PublishRequest
	nextSeq  uint64
	closed   bool
	changed  chan struct{} // closed and replaced on every change of the state
	wake     chan struct{} // cap 1: the delivery loop has something to do

	cancel context.CancelFunc
	done   chan struct{}
}

var _ Sink = (*Publisher)(nil)

// New starts a Publisher that streams to the ReportService of conn. Close
// stops it.
func New(conn grpc.ClientConnInterface, opts Options) (*Publisher, error) {
	return start(&Publisher{client: verdictv1.NewReportServiceClient(conn)}, opts)
}

// NewLocal starts a Publisher that applies its batches to a in the same
// process, one at a time (Window is 1). Close stops it.
func NewLocal(a Applier, opts Options) (*Publisher, error) {
	opts.Window = 1
	return start(&Publisher{local: a}, opts)
}

func start(p *Publisher, opts Options) (*Publisher, error) {
	opts = opts.withDefaults()
	var reg prometheus.Registerer = opts.Registry
	if opts.Registerer != nil {
		reg = opts.Registerer
	}
	m, err := newPubMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.opts, p.log, p.metrics = opts, opts.Logger, m
	p.nextSeq = 1
	p.changed = make(chan struct{})
	p.wake = make(chan struct{}, 1)
	p.cancel, p.done = cancel, make(chan struct{})
	go p.run(ctx)
	return p, nil
}

// Offer queues items without waiting: what does not fit the buffer is
// dropped, counted (verdict_report_publisher_undelivered_total) and
// returned as an error wrapping ErrFull. A decision server offers the item
// of each evaluation, so that an admission answer never waits.
func (p *Publisher) Offer(items ...*verdictv1.PublishItem) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.metrics.undelivered.Add(float64(len(items)))
		return ErrClosed
	}
	room := p.opts.Buffer - len(p.queue)
	dropped := 0
	if len(items) > room {
		dropped = len(items) - max(room, 0)
		items = items[:max(room, 0)]
	}
	p.queue = append(p.queue, items...)
	p.signalLocked()
	p.mu.Unlock()
	p.metrics.queued.Add(float64(len(items)))
	if dropped > 0 {
		p.metrics.undelivered.Add(float64(dropped))
		return fmt.Errorf("%w (%d items): %d items dropped", ErrFull, p.opts.Buffer, dropped)
	}
	return nil
}

// Publish queues items, waiting while the buffer is full, until ctx is
// done. The items are delivered in order; Flush waits until they are
// acknowledged.
func (p *Publisher) Publish(ctx context.Context, items ...*verdictv1.PublishItem) error {
	for len(items) > 0 {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		room := p.opts.Buffer - len(p.queue)
		if room > 0 {
			n := min(room, len(items))
			p.queue = append(p.queue, items[:n]...)
			items = items[n:]
			p.signalLocked()
			p.metrics.queued.Add(float64(n))
			p.mu.Unlock()
			continue
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Flush waits until every item queued so far is acknowledged, or ctx is
// done.
func (p *Publisher) Flush(ctx context.Context) error {
	for {
		p.mu.Lock()
		empty := len(p.queue) == 0 && len(p.inflight) == 0
		ch := p.changed
		p.mu.Unlock()
		if empty {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close delivers what is queued (waiting until ctx is done), then stops.
// Items still not acknowledged are counted as undelivered and returned as
// an error.
func (p *Publisher) Close(ctx context.Context) error {
	err := p.Flush(ctx)
	p.mu.Lock()
	p.closed = true
	lost := len(p.queue)
	for _, b := range p.inflight {
		lost += len(b.GetItems())
	}
	p.queue, p.inflight = nil, nil
	p.signalLocked()
	p.mu.Unlock()
	p.cancel()
	<-p.done
	if lost > 0 {
		p.metrics.undelivered.Add(float64(lost))
		return fmt.Errorf("report publisher closed with %d items not delivered: %w", lost, err)
	}
	return nil
}

// signalLocked wakes the stream loop and the waiters. p.mu is held.
func (p *Publisher) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run hands batches to the writer while the publisher lives, again
// after each failure, with backoff.
func (p *Publisher) run(ctx context.Context) {
	defer close(p.done)
	backoff := p.opts.BackoffMin
	for ctx.Err() == nil {
		deliver, what := p.stream, "report stream broken"
		if p.local != nil {
			deliver, what = p.apply, "report batch not applied"
		}
		acked, err := deliver(ctx)
		if ctx.Err() != nil {
			return
		}
		if acked {
			backoff = p.opts.BackoffMin
		}
		p.metrics.reconnects.Inc()
		p.log.Warn(what, "error", err, "retry_in", backoff)
		if ctxtime.Sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(2*backoff, p.opts.BackoffMax)
	}
}

// waitWork waits until there is something to deliver.
func (p *Publisher) waitWork(ctx context.Context) error {
	for {
		p.mu.Lock()
		idle := len(p.queue) == 0 && len(p.inflight) == 0
		p.mu.Unlock()
		if !idle {
			return nil
		}
		select {
		case <-p.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// batchLocked moves queued items into new batches while the window
// allows. p.mu is held.
func (p *Publisher) batchLocked() {
	for len(p.inflight) < p.opts.Window && len(p.queue) > 0 {
		n := min(len(p.queue), p.opts.MaxBatchItems)
		b := &verdictv1.PublishRequest{Sequence: p.nextSeq, Items: p.queue[:n:n]}
		p.nextSeq++
		p.queue = p.queue[n:]
		p.inflight = append(p.inflight, b)
	}
}

// acknowledged takes the oldest batch out of flight once the writer
// acknowledged batch seq, and counts it. It fails when seq is not the
// oldest batch.
func (p *Publisher) acknowledged(seq uint64, rejected []*verdictv1.PublishRejection, duplicates int) error {
	p.mu.Lock()
	if len(p.inflight) == 0 || p.inflight[0].GetSequence() != seq {
		p.mu.Unlock()
		return fmt.Errorf("acknowledgement of batch %d out of order", seq)
	}
	b := p.inflight[0]
	p.inflight = p.inflight[1:]
	p.signalLocked()
	p.mu.Unlock()
	p.metrics.acked.Add(float64(len(b.GetItems()) - len(rejected)))
	p.metrics.rejected.Add(float64(len(rejected)))
	p.metrics.duplicates.Add(float64(duplicates))
	for _, r := range rejected {
		p.log.Error("report item rejected", "batch", seq, "field", r.GetViolation().GetField(), "error", r.GetViolation().GetDescription())
	}
	return nil
}

// apply applies batches to the local writer, one at a time, until one
// fails. acked reports whether one was applied.
func (p *Publisher) apply(ctx context.Context) (acked bool, err error) {
	p.mu.Lock()
	p.metrics.resent.Add(float64(len(p.inflight))) // failed before
	p.mu.Unlock()
	for {
		if err := p.waitWork(ctx); err != nil {
			return acked, err
		}
		p.mu.Lock()
		p.batchLocked()
		if len(p.inflight) == 0 { // closed meanwhile
			p.mu.Unlock()
			return acked, ErrClosed
		}
		b := p.inflight[0]
		p.mu.Unlock()
		p.metrics.batches.Inc()
		res, err := p.local.Apply(ctx, b.GetItems())
		if err != nil {
			return acked, err
		}
		if err := p.acknowledged(b.GetSequence(), res.Rejected, res.Duplicates); err != nil {
			return acked, err
		}
		acked = true
	}
}

// stream runs one Publish stream until it breaks: it sends again the
// batches not acknowledged, then new batches within the window. acked
// reports whether an acknowledgement arrived.
func (p *Publisher) stream(ctx context.Context) (acked bool, err error) {
	// Wait for something to send before opening a stream.
	if err := p.waitWork(ctx); err != nil {
		return false, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := p.client.Publish(sctx)
	if err != nil {
		return false, err
	}
	acks, recvErr := streamrecv.Start(sctx, st.Recv)
	sent := 0 // batches of inflight sent on this stream
	p.mu.Lock()
	p.metrics.resent.Add(float64(len(p.inflight))) // not acknowledged on the previous stream
	p.mu.Unlock()
	for {
		// Send what the window allows.
		p.mu.Lock()
		p.batchLocked()
		if sent > len(p.inflight) { // closed meanwhile
			p.mu.Unlock()
			return acked, ErrClosed
		}
		toSend := append([]*verdictv1.PublishRequest(nil), p.inflight[sent:]...)
		p.mu.Unlock()
		for _, b := range toSend {
			if err := st.Send(b); err != nil {
				return acked, err
			}
			sent++
			p.metrics.batches.Inc()
		}
		select {
		case a := <-acks:
			if err := p.acknowledged(a.GetSequence(), a.GetRejected(), int(a.GetDuplicates())); err != nil {
				return acked, err
			}
			sent--
			acked = true
		case err := <-recvErr:
			return acked, err
		case <-p.wake:
		case <-ctx.Done():
			return acked, ctx.Err()
		}
	}
}

type pubMetrics struct {
	queued, acked, undelivered, rejected, duplicates prometheus.Counter
	batches, resent, reconnects                      prometheus.Counter
}

func newPubMetrics(reg prometheus.Registerer) (*pubMetrics, error) {
	b := promreg.New(reg)
	const p = "verdict_report_publisher_"
	m := &pubMetrics{
		queued:      b.Counter(p+"items_queued_total", "Items queued for the report writer."),
		acked:       b.Counter(p+"items_acknowledged_total", "Items the report writer acknowledged as durable."),
		undelivered: b.Counter(p+"undelivered_total", "Items that could not be delivered: buffer full, or not acknowledged when the publisher closed."),
		rejected:    b.Counter(p+"items_rejected_total", "Items the report writer rejected as not valid."),
		duplicates:  b.Counter(p+"items_duplicate_total", "Items the report writer already held."),
		batches:     b.Counter(p+"batches_sent_total", "Batches sent, resent ones included."),
		resent:      b.Counter(p+"batches_resent_total", "Batches sent again on a new stream after a broken one."),
		reconnects:  b.Counter(p+"reconnects_total", "Streams that broke and were opened again."),
	}
	return m, b.Err()
}
