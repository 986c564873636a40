package reportwriter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/verdict-policy/verdict/internal/options"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of Options.
const (
	DefaultMaxBatchItems    = 1000
	DefaultMaxMessageBytes  = 4 << 20
	DefaultMaxUnacked       = 64
	DefaultMaxFlushItems    = 10000
	DefaultTombstoneTTL     = time.Hour
	DefaultQueueBatches     = 256
	DefaultReportInterval   = time.Second
	DefaultMaxClockSkew     = 5 * time.Minute
	DefaultPolicySenderTTL  = 5 * time.Minute
	DefaultMaxSenders       = 256
	DefaultMaxResources     = 250_000
	DefaultMaxTombstones    = 500_000
	DefaultMaxInflightBytes = 128 << 20
	DefaultAckTimeout       = 30 * time.Second

	DefaultMaxReportWriteBytes = 8 << 20
)

// Options configure a Writer. Only Store is required; every other field has
// a default, filled by withDefaults at the top of New.
type Options struct {
	// Store keeps the state durably. Required.
	Store Store

	// Logger receives the writer's logs. Default: discard.
	Logger *slog.Logger
	// Registry receives the writer's metrics. Default: a new registry.
	Registry *prometheus.Registry

	// MaxBatchItems limits the items of one Publish batch; a larger batch
	// ends the stream with RESOURCE_EXHAUSTED. Default 1000.
	MaxBatchItems int
	// MaxMessageBytes limits the size of one Publish batch (the gRPC
	// server's receive limit should not be lower); a larger batch ends the
	// stream with RESOURCE_EXHAUSTED. Default 4 MiB.
	MaxMessageBytes int
	// MaxUnacked limits the batches a sender may have without an
	// acknowledgement on one stream; one more ends the stream with
	// RESOURCE_EXHAUSTED. Default 64.
	MaxUnacked int
	// MaxInflightBytes bounds the bytes of the batches received and not
	// acknowledged yet, over every Publish stream: a stream receives its
	// next batch once there is room (gRPC's flow control then holds its
	// sender). At least MaxMessageBytes. Default 128 MiB.
	MaxInflightBytes int64
	// AckTimeout bounds the wait for a sender to take an acknowledgement
	// (gRPC flow control blocks it when the sender does not read them): a
	// stream whose sender does not is ended with DEADLINE_EXCEEDED, so that
	// it does not hold its in-flight bytes. Default 30s.
	AckTimeout time.Duration

	// MaxFlushItems bounds the items applied in one store transaction:
	// batches that arrive while a flush is running are applied together
	// in the next one, up to this many items. Default 10000.
	MaxFlushItems int
	// FlushDelay is how long the writer waits for more batches before a
	// flush, to write fewer, larger transactions. Default 0: flush as soon
	// as the previous flush is done.
	FlushDelay time.Duration
	// QueueBatches bounds the batches waiting for a flush, over every
	// stream; a sender waits when it is full. Default 256.
	QueueBatches int

	// ReportInterval is how often changed final reports are rendered and
	// written: a report changed by many batches is written once per
	// interval. Acknowledgements wait only for the intermediary reports,
	// from which final reports are rebuilt at start; with a DeferredStore
	// they wait for the next write of the final reports and for the store
	// to make it durable. Reads (ListReports,
	// GetReport) write the changed reports first, so they see every batch
	// acknowledged before them. Default 1s.
	ReportInterval time.Duration

	// MaxReportWriteBytes bounds the JSON of the final reports written in
	// one store transaction: the changed reports are rendered and written
	// a part at a time, each part closed once its reports reach this size
	// (a report larger than it is a part of its own), so that the writer
	// holds the JSON of one part at a time instead of every changed
	// report (the first write after a scan of thousands of resources
	// changes them all). Default 8 MiB.
	MaxReportWriteBytes int

	// TombstoneTTL is how long a deleted resource is remembered, so that
	// an evaluation of it sent again does not bring its entries back.
	// Default 1h.
	TombstoneTTL time.Duration

	// Now is the clock (report timestamps, tombstone expiry, the max
	// clock skew, the senders' liveness). Default time.Now.
	Now func() time.Time

	// MaxClockSkew bounds how far in the future of the writer's clock a
	// publisher's time may be (ResourceEvaluation.time,
	// BackgroundScanDone.started, PolicySet.time): an item with a later
	// time is rejected (its field named in the acknowledgement) and
	// counted, never stored, since a time in the future would make every
	// later item look older. New also removes such times from what the
	// store holds (see repairFuture). Default 5m.
	MaxClockSkew time.Duration
	// PolicySenderTTL is how long a decision server counts as live after
	// its last PolicySet (senders send theirs at least every minute); see
	// doc.go for how the live senders' sets remove the entries of
	// policies they no longer have. Default 5m.
	PolicySenderTTL time.Duration
	// MaxPolicySenders bounds the live senders of policy sets; a set from
	// one more sender is rejected and counted. Default 256.
	MaxPolicySenders int
	// MaxResources bounds the resources the writer holds entries of; an
	// evaluation of one more resource is rejected and counted. An entry
	// takes about 440 bytes of memory (a Pod with 17 policies 7.4 KB, in
	// TestScaleReports), so the default, 250,000 resources, is about
	// 320 MiB of live heap with 3 policies each and 1.7 GiB with 17:
	// more than the writer of the manifests (1 GiB) holds with many
	// policies; shard the writers beyond.
	MaxResources int
	// MaxTombstones bounds the deleted resources remembered
	// (TombstoneTTL); over it, a deletion of a resource the writer holds
	// still removes its entries, without a tombstone, and a deletion of
	// another resource is rejected; both are counted. Default 500,000
	// (about 100 bytes each).
	MaxTombstones int

	// GroupResults makes the resources with the same outcome of a rule
	// (result, message, properties) share one results[] entry whose
	// resources[] lists them all, which makes reports about three times
	// smaller (see docs/reports.md). Off by default: one entry per resource
	// and rule, as Kyverno writes them, because Policy Reporter reads only
	// the first resource of an entry and would hide the others. Summaries
	// count one per resource either way.
	GroupResults bool

	// Events receives each evaluation the writer applied once it is
	// written (an admission request that was denied, a dry run or CONNECT
	// too: they change no report but have events), never one that changed
	// nothing (a duplicate, or older than the state held). It must not
	// wait (internal/kubeevents queues). Default: none.
	Events EventSink
}

// EventSink takes the evaluations a writer applied, for Kubernetes Events
// (internal/kubeevents.Emitter). Evaluation must not wait, nor modify
// the evaluation.
type EventSink interface {
	Evaluation(*verdictv1.ResourceEvaluation)
}

func (o Options) withDefaults() Options {
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	options.Positive(&o.MaxBatchItems, DefaultMaxBatchItems)
	options.Positive(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	options.Positive(&o.MaxUnacked, DefaultMaxUnacked)
	options.Positive(&o.MaxInflightBytes, DefaultMaxInflightBytes)
	o.MaxInflightBytes = max(o.MaxInflightBytes, int64(o.MaxMessageBytes))
	options.Positive(&o.AckTimeout, DefaultAckTimeout)
	options.Positive(&o.MaxFlushItems, DefaultMaxFlushItems)
	options.Positive(&o.QueueBatches, DefaultQueueBatches)
	options.Positive(&o.ReportInterval, DefaultReportInterval)
	options.Positive(&o.TombstoneTTL, DefaultTombstoneTTL)
	options.Positive(&o.MaxReportWriteBytes, DefaultMaxReportWriteBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
	options.Positive(&o.MaxClockSkew, DefaultMaxClockSkew)
	options.Positive(&o.PolicySenderTTL, DefaultPolicySenderTTL)
	options.Positive(&o.MaxPolicySenders, DefaultMaxSenders)
	options.Positive(&o.MaxResources, DefaultMaxResources)
	options.Positive(&o.MaxTombstones, DefaultMaxTombstones)
	return o
}

func (o Options) modelConfig() modelConfig {
	return modelConfig{
		groupResults: o.GroupResults,
		senderTTL:    o.PolicySenderTTL, maxSenders: o.MaxPolicySenders,
		maxResources: o.MaxResources, maxTombstones: o.MaxTombstones,
	}
}

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("report writer closed")

// Writer keeps intermediary and final reports. Batches reach it through
// Apply (in process) or the ReportService it implements (gRPC); one
// goroutine applies them to the model and writes the changes, one store
// transaction per flush, before it acknowledges them.
type Writer struct {
	verdictv1.UnimplementedReportServiceServer

	opts    Options
	log     *slog.Logger
	metrics *metrics
	// inflight holds MaxInflightBytes: the bytes of the batches received
	// and not acknowledged, over every stream.
	inflight *semaphore.Weighted

	queue chan *request
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	// deferred is Store when it is a DeferredStore: acknowledgements are
	// held until the batches' reports are durable.
	deferred DeferredStore
	// reader is Store when it is a ReportReader: the view then holds no
	// report JSON.
	reader ReportReader
	// held are the batches applied and written whose acknowledgement
	// waits for the next report write (loop goroutine only).
	held []heldAck

	// draining is closed by Drain: Publish streams end.
	draining  chan struct{}
	drainOnce sync.Once

	// the durable final reports, for reads
	mu   sync.RWMutex
	view map[ReportKey]*StoredReport
}

// request is one batch waiting to be applied.
type request struct {
	sync     bool // write the changed final reports now
	items    []item
	rejected []*verdictv1.PublishRejection
	done     chan Result
	arrived  time.Time
}

// heldAck is a batch applied and written to the store whose result is
// held until its reports are durable.
type heldAck struct {
	req *request
	res Result
}

// Result is what applying a batch did.
type Result struct {
	// Rejected lists the items that were not valid and not applied.
	Rejected []*verdictv1.PublishRejection
	// Duplicates counts the items that changed nothing because the writer
	// already held them or newer state.
	Duplicates int
	// Err is set when the batch could not be made durable; nothing of it
	// may be assumed applied.
	Err error
}

// New loads the store and starts the writer. Close stops it.
func New(opts Options) (*Writer, error) {
	opts = opts.withDefaults()
	if opts.Store == nil {
		return nil, errors.New("report writer: no store")
	}
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	st, err := opts.Store.Load(context.Background())
	if err != nil {
		return nil, fmt.Errorf("load reports: %w", err)
	}
	w := &Writer{
		opts:     opts,
		log:      opts.Logger,
		metrics:  m,
		queue:    make(chan *request, opts.QueueBatches),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		draining: make(chan struct{}),
		view:     map[ReportKey]*StoredReport{},
		inflight: semaphore.NewWeighted(opts.MaxInflightBytes),
	}
	w.deferred, _ = opts.Store.(DeferredStore)
	w.reader, _ = opts.Store.(ReportReader)
	for _, sr := range st.Reports {
		w.view[sr.Key] = w.viewOf(sr)
	}
	md := load(st, opts.modelConfig())
	md.now = opts.Now()
	if n := md.repairFuture(md.now.Add(opts.MaxClockSkew)); n.total() > 0 {
		// Written before the clock skew was checked: see repairFuture.
		opts.Logger.Warn("removed times later than the writer's clock plus the max clock skew from the stored state",
			"policy_sets", n.policySets, "entries", n.entries, "tombstones", n.tombstones, "max_clock_skew", opts.MaxClockSkew)
		m.repaired.WithLabelValues("policy_set").Add(float64(n.policySets))
		m.repaired.WithLabelValues("entry").Add(float64(n.entries))
		m.repaired.WithLabelValues("tombstone").Add(float64(n.tombstones))
	}
	md.maybeReconcile()
	// Remove the stored reports that have no rows any more.
	c, err := md.changes(md.now, false, opts.TombstoneTTL, true)
	if err != nil {
		return nil, fmt.Errorf("load reports: %w", err)
	}
	if !c.Empty() {
		if err := opts.Store.Write(context.Background(), c); err != nil {
			return nil, fmt.Errorf("write reports: %w", err)
		}
	}
	w.publishView(c)
	w.metrics.reports.Set(float64(len(w.view)))
	go w.loop(md)
	return w, nil
}

// Apply applies a batch of items and returns once its effect is durable:
// written to the store, and with a DeferredStore, its reports durable
// where a standby reads them. Items that are not valid are listed in
// Result.Rejected; the others are applied. The error is set when the
// batch could not be applied (ctx done, writer closed, store failure).
func (w *Writer) Apply(ctx context.Context, items []*verdictv1.PublishItem) (Result, error) {
	done, err := w.submit(ctx, items)
	if err != nil {
		return Result{}, err
	}
	select {
	case res := <-done:
		return res, res.Err
	case <-ctx.Done():
		// The batch may still be applied; the sender sends it again.
		return Result{}, ctx.Err()
	}
}

// submit queues a batch to be applied; its Result arrives on the returned
// channel once the batch is durable (or failed).
func (w *Writer) submit(ctx context.Context, items []*verdictv1.PublishItem) (<-chan Result, error) {
	c := checker{now: w.opts.Now(), maxSkew: w.opts.MaxClockSkew, future: func(field string) {
		w.metrics.future.WithLabelValues(field).Inc()
	}}
	checked, rejected := c.checkItems(items)
	w.metrics.batches.Inc()
	w.metrics.rejected.Add(float64(len(rejected)))
	for _, it := range checked {
		if it.eval != nil {
			w.metrics.entries.Add(float64(len(it.eval.results)))
		}
	}
	req := &request{items: checked, rejected: rejected, done: make(chan Result, 1), arrived: time.Now()}
	select {
	case w.queue <- req:
		return req.done, nil
	case <-w.stop:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Sync writes the changed final reports now instead of at the end of the
// ReportInterval, and returns when they are readable.
func (w *Writer) Sync(ctx context.Context) error {
	req := &request{sync: true, done: make(chan Result, 1)}
	select {
	case w.queue <- req:
	case <-w.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case res := <-req.done:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the writer after the batches queued so far and writes the
// changed reports; it waits until they are written or ctx is done. It does
// not close the store.
func (w *Writer) Close(ctx context.Context) error {
	w.Drain()
	w.once.Do(func() { close(w.stop) })
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain ends the Publish streams (with UNAVAILABLE, so that senders send
// what was not acknowledged again elsewhere or later; batches queued are
// still applied, and applying them again changes nothing); Apply keeps
// working until Close.
func (w *Writer) Drain() {
	w.drainOnce.Do(func() { close(w.draining) })
}

func (w *Writer) loop(m *model) {
	defer close(w.done)
	var lastGC time.Time
	var reportTimer <-chan time.Time // set while final reports wait to be written
	for {
		var first *request
		select {
		case first = <-w.queue:
			if first.sync {
				reportTimer = nil
				m = w.flushReports(m)
				first.done <- Result{}
				continue
			}
		case <-reportTimer:
			reportTimer = nil
			m = w.flushReports(m)
			continue
		case <-w.stop:
			// Apply what is queued, write the reports, then stop.
			select {
			case first = <-w.queue:
				if first.sync {
					m = w.flushReports(m)
					first.done <- Result{}
					continue
				}
			default:
				w.flushReports(m)
				return
			}
		}
		if d := w.opts.FlushDelay; d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-w.stop:
			}
			t.Stop()
		}
		batch := []*request{first}
		n := len(first.items)
		var sync *request // a Sync that arrived while gathering
	gather:
		for n < w.opts.MaxFlushItems {
			select {
			case r := <-w.queue:
				if r.sync {
					sync = r
					break gather
				}
				batch = append(batch, r)
				n += len(r.items)
			default:
				break gather
			}
		}
		now := w.opts.Now()
		gc := now.Sub(lastGC) > time.Minute
		if gc {
			lastGC = now
		}
		m = w.flush(m, batch, now, gc)
		if sync != nil {
			reportTimer = nil
			m = w.flushReports(m)
			sync.done <- Result{}
			continue
		}
		if (len(m.dirtyReports) > 0 || len(w.held) > 0) && reportTimer == nil {
			reportTimer = time.After(w.opts.ReportInterval)
		}
	}
}

// flush applies a group of batches and writes their changes (without the
// final reports) in one store transaction. When the store fails, the model
// is loaded again from the store and every batch of the group fails. With
// a DeferredStore the results are held until the next report write.
func (w *Writer) flush(m *model, batch []*request, now time.Time, gc bool) *model {
	results := make([]Result, len(batch))
	m.now = now
	var events []*verdictv1.ResourceEvaluation
	for i, r := range batch {
		results[i].Rejected = r.rejected
		for _, it := range r.items {
			switch m.apply(it) {
			case unchanged:
				results[i].Duplicates++
			case refused:
				results[i].Rejected = append(results[i].Rejected, w.refusal(m, it))
			case applied, ignored:
				if it.eval != nil && w.opts.Events != nil {
					events = append(events, it.eval.raw)
				}
			}
		}
		w.metrics.duplicates.Add(float64(results[i].Duplicates))
		// Applied: the model holds what it keeps of the items. The
		// acknowledgement, held until the reports are durable with a
		// DeferredStore, must not keep the decoded batch (its messages
		// and entries) alive meanwhile.
		r.items = nil
	}
	w.metrics.tombsSkipped.Add(float64(m.tombsSkipped))
	m.tombsSkipped = 0
	c, err := m.changes(now, gc, w.opts.TombstoneTTL, false)
	if err == nil {
		err = w.write(c)
	}
	if err != nil {
		m = w.reload(m)
		for _, r := range batch {
			r.done <- Result{Err: fmt.Errorf("write reports: %w", err)}
		}
		return m
	}
	for _, ev := range events {
		w.opts.Events.Evaluation(ev)
	}
	for i, r := range batch {
		if w.deferred != nil {
			w.held = append(w.held, heldAck{req: r, res: results[i]})
			continue
		}
		w.finish(r, results[i])
	}
	if w.deferred != nil {
		w.metrics.held.Add(float64(len(batch)))
	}
	return m
}

// refusal is the rejection of an item the model refused (a limit), and
// counts it.
func (w *Writer) refusal(m *model, it item) *verdictv1.PublishRejection {
	w.metrics.rejected.Inc()
	switch {
	case it.policy != nil:
		w.metrics.overLimit.WithLabelValues("max_policy_senders").Inc()
		return violation(it.index, "policy_set.sender", "%q: %d senders are live, the max policy senders", it.policy.Sender, w.opts.MaxPolicySenders)
	case it.eval != nil && it.eval.operation == verdictv1.Operation_OPERATION_DELETE:
		w.metrics.overLimit.WithLabelValues("max_tombstones").Inc()
		return violation(it.index, "evaluation.resource", "%d deleted resources are remembered, the max tombstones", w.opts.MaxTombstones)
	default:
		w.metrics.overLimit.WithLabelValues("max_resources").Inc()
		return violation(it.index, "evaluation.resource", "%d resources are held, the max resources", w.opts.MaxResources)
	}
}

// finish delivers the result of a batch.
func (w *Writer) finish(r *request, res Result) {
	if res.Err == nil {
		w.metrics.ackSeconds.Observe(time.Since(r.arrived).Seconds())
	}
	r.done <- res
}

// release hands the held results over to a goroutine that delivers them
// once the store has made durable everything written so far (err nil),
// or fails them with err.
func (w *Writer) release(err error) {
	if len(w.held) == 0 {
		return
	}
	held := w.held
	w.held = nil
	if err != nil {
		for _, h := range held {
			w.finish(h.req, Result{Err: err})
		}
		w.metrics.held.Sub(float64(len(held)))
		return
	}
	go func() {
		err := w.deferred.WaitDurable(context.Background())
		for _, h := range held {
			res := h.res
			if err != nil {
				res = Result{Err: fmt.Errorf("reports not durable: %w", err)}
			}
			w.finish(h.req, res)
		}
		w.metrics.held.Sub(float64(len(held)))
	}()
}

// flushReports renders the changed final reports and writes them, in
// store transactions of about MaxReportWriteBytes of reports each (final
// reports are rebuilt from the intermediaries at start, so a write cut
// short loses nothing); held acknowledgements are released once every
// part is written.
func (w *Writer) flushReports(m *model) *model {
	m.now = w.opts.Now()
	c, err := m.changes(m.now, false, w.opts.TombstoneTTL, false)
	if err == nil {
		err = w.write(c)
	}
	if err == nil {
		err = m.writeReports(m.now, w.opts.MaxReportWriteBytes, func(c *Changes) error {
			if err := w.write(c); err != nil {
				return err
			}
			w.publishView(c)
			return nil
		})
	}
	if err != nil {
		w.release(fmt.Errorf("write reports: %w", err))
		return w.reload(m)
	}
	w.release(nil)
	return m
}

// write writes c in one store transaction, timed.
func (w *Writer) write(c *Changes) error {
	if c.Empty() {
		return nil
	}
	start := time.Now()
	err := w.opts.Store.Write(context.Background(), c)
	w.metrics.storeWrites.Inc()
	w.metrics.flushSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		w.metrics.storeErrors.Inc()
		w.log.Error("write reports", "error", err)
	}
	return err
}

// reload loads the model again from the store after a failed write.
func (w *Writer) reload(m *model) *model {
	st, err := w.opts.Store.Load(context.Background())
	if err != nil {
		w.log.Error("reload reports", "error", err)
		return m
	}
	md := load(st, w.opts.modelConfig())
	md.now = w.opts.Now()
	return md
}

// publishView makes the written reports visible to readers.
func (w *Writer) publishView(c *Changes) {
	if len(c.PutReports) == 0 && len(c.DeleteReports) == 0 {
		return
	}
	w.mu.Lock()
	for _, sr := range c.PutReports {
		w.view[sr.Key] = w.viewOf(sr)
	}
	for _, k := range c.DeleteReports {
		delete(w.view, k)
	}
	n := len(w.view)
	w.mu.Unlock()
	w.metrics.reports.Set(float64(n))
}

// viewOf is what the view keeps of a written report: with a
// ReportReader, everything but its JSON.
func (w *Writer) viewOf(sr *StoredReport) *StoredReport {
	if w.reader == nil {
		return sr
	}
	v := *sr
	v.Report = nil
	return &v
}

// Reports returns the final reports of kind (PolicyReport,
// ClusterPolicyReport, or "" for both) in namespace ("" for every
// namespace), sorted by kind, namespace and name. Their Report (the JSON)
// is nil when the store is a ReportReader: Report reads it.
func (w *Writer) Reports(kind, namespace string) []*StoredReport {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []*StoredReport
	for k, sr := range w.view {
		if kind != "" && k.Kind() != kind {
			continue
		}
		if namespace != "" && k.Namespace != namespace {
			continue
		}
		out = append(out, sr)
	}
	sortReports(out)
	return out
}

// Report returns one final report with its JSON, or nil. With a
// ReportReader store the JSON is read from the store.
func (w *Writer) Report(ctx context.Context, k ReportKey) (*StoredReport, error) {
	w.mu.RLock()
	sr := w.view[k]
	w.mu.RUnlock()
	if sr == nil || w.reader == nil {
		return sr, nil
	}
	b, err := w.reader.ReadReport(ctx, k)
	if err != nil || b == nil {
		// nil: a report of another shard, which the store does not keep.
		return nil, err
	}
	out := *sr
	out.Report = b
	return &out, nil
}
