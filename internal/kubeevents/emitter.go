package kubeevents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/promreg"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of Options.
const (
	// DefaultMaxQueued is Kyverno's --maxQueuedEvents default.
	DefaultMaxQueued = 1000
	// DefaultWorkers is Kyverno's number of event workers.
	DefaultWorkers = 3
	// DefaultRetries is how often a failed write is tried again
	// (Kyverno's workQueueRetryLimit).
	DefaultRetries = 3
	// DefaultRetryDelay is the wait before the first retry; it doubles.
	DefaultRetryDelay = 500 * time.Millisecond
	// DefaultBurst and DefaultQPS are client-go's spam filter: per
	// reporting controller, object and type, a burst of 25 events, then
	// one every 5 minutes.
	DefaultBurst = 25
	DefaultQPS   = 1. / 300.
	// DefaultAggregateMaxEvents and DefaultAggregateInterval are client-go's
	// aggregation: the 10th event on an object with the same reason and
	// another message within 10 minutes, and those after it, are counted
	// on one event "(combined from similar events): ...".
	DefaultAggregateMaxEvents = 10
	DefaultAggregateInterval  = 10 * time.Minute
	// DefaultCacheSize is client-go's: the objects the correlator
	// remembers (least recently used go first).
	DefaultCacheSize = 4096
	// MaxMessageLength is Kyverno's and Kubernetes' limit of an event's
	// message; longer ones are cut to it, ending with "...".
	MaxMessageLength = 1024
)

// Options configure an Emitter.
type Options struct {
	// Client writes the events (core/v1 Events). Required.
	Client kubernetes.Interface
	// Omit are the reasons not emitted (Kyverno's --omitEvents). Nil:
	// DefaultOmit; empty and not nil: none.
	Omit []string
	// MaxQueued bounds the events waiting to be written; one more is
	// dropped and counted (verdict_events_dropped_total{cause="queue_full"}).
	// Default 1000.
	MaxQueued int
	// Workers write the events. Default 3.
	Workers int
	// Retries is how often a write that failed for a reason other than the
	// event itself (the API server unreachable, throttled) is tried again,
	// after RetryDelay, doubling; then the event is dropped and counted.
	// Defaults 3 and 500ms.
	Retries    int
	RetryDelay time.Duration
	// Burst and QPS are the spam filter (client-go's record.EventCorrelator):
	// per source (reporting controller and host), object and type, Burst
	// events, then QPS per second. Defaults 25 and 1/300.
	Burst int
	QPS   float64
	// AggregateMaxEvents and AggregateInterval: similar events (same
	// object, reason and source, other messages) beyond AggregateMaxEvents
	// within AggregateInterval are combined into one. Defaults 10 and 10m.
	AggregateMaxEvents int
	AggregateInterval  time.Duration
	// CacheSize bounds the objects the correlator remembers. Default 4096.
	CacheSize int
	// Host names this instance in reportingInstance (source-host).
	// Default: the host name.
	Host string
	// Clock is the correlator's and the events' clock. Default: real.
	Clock clock.Clock
	// Logger receives the emitter's logs. Default: discard.
	Logger *slog.Logger
	// Registry receives the emitter's metrics. Default: a new registry.
	Registry *prometheus.Registry
}

func (o Options) withDefaults() Options {
	if o.Omit == nil {
		o.Omit = DefaultOmit
	}
	options.Positive(&o.MaxQueued, DefaultMaxQueued)
	options.Positive(&o.Workers, DefaultWorkers)
	if o.Retries < 0 {
		o.Retries = 0
	}
	options.Positive(&o.RetryDelay, DefaultRetryDelay)
	options.Positive(&o.Burst, DefaultBurst)
	options.Positive(&o.QPS, DefaultQPS)
	options.Positive(&o.AggregateMaxEvents, DefaultAggregateMaxEvents)
	options.Positive(&o.AggregateInterval, DefaultAggregateInterval)
	options.Positive(&o.CacheSize, DefaultCacheSize)
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	return o
}

// ParseOmit checks a list of reasons (--omit-events): each one of
// Reasons. An empty list omits nothing.
func ParseOmit(list []string) ([]string, error) {
	out := []string{}
	for _, r := range list {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		ok := false
		for _, k := range Reasons {
			ok = ok || k == r
		}
		if !ok {
			return nil, fmt.Errorf("%q: want %s", r, strings.Join(Reasons, ", "))
		}
		out = append(out, r)
	}
	return out, nil
}

// Emitter writes Kubernetes Events as Kyverno does, without ever making
// its caller wait: Add queues them (at most MaxQueued; what has no room
// is dropped and counted), workers correlate them (client-go's
// record.EventCorrelator: identical events counted on one Event, similar
// ones aggregated, a spam filter per object) and write them to the API
// server.
type Emitter struct {
	opts       Options
	omit       map[string]bool
	queue      chan Info
	correlator *record.EventCorrelator
	corrMu     sync.Mutex
	metrics    *metrics

	wg      sync.WaitGroup
	pending atomic.Int64 // queued or being written
}

type metrics struct {
	queued  prometheus.Gauge
	written *prometheus.CounterVec
	omitted *prometheus.CounterVec
	dropped *prometheus.CounterVec
}

// New prepares an Emitter; Run writes what Add queues.
func New(opts Options) (*Emitter, error) {
	if opts.Client == nil {
		return nil, errors.New("events: Client is required")
	}
	o := opts.withDefaults()
	omit, err := ParseOmit(o.Omit)
	if err != nil {
		return nil, fmt.Errorf("omit events: %w", err)
	}
	b := promreg.New(o.Registry)
	m := &metrics{
		queued:  b.Gauge("verdict_events_queued", "Kubernetes Events waiting to be written (at most the max queued events)."),
		written: b.CounterVec("verdict_events_total", "Kubernetes Events written to the API server (created, or counted on an existing one), by reason.", "reason"),
		omitted: b.CounterVec("verdict_events_omitted_total", "Kubernetes Events not emitted because their reason is omitted (--omit-events), by reason.", "reason"),
		dropped: b.CounterVec("verdict_events_dropped_total", "Kubernetes Events dropped, by cause: queue_full (the queue held the max queued events), rate_limited (the spam filter), rejected (the API server refused the event), failed (the write failed after the retries), stopped (still queued when the process stopped).", "cause"),
	}
	if err := b.Err(); err != nil {
		return nil, err
	}
	e := &Emitter{
		opts:    o,
		omit:    map[string]bool{},
		queue:   make(chan Info, o.MaxQueued),
		metrics: m,
		correlator: record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{
			LRUCacheSize:         o.CacheSize,
			BurstSize:            o.Burst,
			QPS:                  float32(o.QPS),
			MaxEvents:            o.AggregateMaxEvents,
			MaxIntervalInSeconds: int(o.AggregateInterval / time.Second),
			Clock:                o.Clock,
		}),
	}
	for _, r := range omit {
		e.omit[r] = true
	}
	for _, r := range Reasons {
		m.written.WithLabelValues(r)
	}
	for _, c := range []string{"queue_full", "rate_limited", "rejected", "failed", "stopped"} {
		m.dropped.WithLabelValues(c)
	}
	return e, nil
}

// Evaluation queues the events of an evaluation the report writer
// applied (FromEvaluation). It never waits.
func (e *Emitter) Evaluation(ev *verdictv1.ResourceEvaluation) {
	if e.omit[PolicyViolation] {
		return // the only reason FromEvaluation gives: nothing to build
	}
	e.Add(FromEvaluation(ev)...)
}

// Add queues events, without waiting: an omitted reason is counted and
// left out, an event without a name on its object is left out (as
// Kyverno does), and an event the queue has no room for is dropped and
// counted.
func (e *Emitter) Add(infos ...Info) {
	for _, in := range infos {
		if in.Regarding.Name == "" {
			continue
		}
		if e.omit[in.Reason] {
			e.metrics.omitted.WithLabelValues(in.Reason).Inc()
			continue
		}
		e.pending.Add(1)
		select {
		case e.queue <- in:
			e.metrics.queued.Inc()
		default:
			e.pending.Add(-1)
			e.metrics.dropped.WithLabelValues("queue_full").Inc()
		}
	}
}

// Run writes the queued events until ctx ends; what is still queued then
// is dropped and counted (verdict_events_dropped_total{cause="stopped"}):
// call Flush first to write it.
func (e *Emitter) Run(ctx context.Context) {
	for range e.opts.Workers {
		e.wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case in := <-e.queue:
					e.metrics.queued.Dec()
					e.write(ctx, in)
					e.pending.Add(-1)
				}
			}
		})
	}
	e.wg.Wait()
	for {
		select {
		case <-e.queue:
			e.metrics.queued.Dec()
			e.pending.Add(-1)
			e.metrics.dropped.WithLabelValues("stopped").Inc()
		default:
			return
		}
	}
}

// Flush waits until the events queued so far are written (or dropped),
// for a process that ends (a scan), or until ctx ends. Run must be
// running.
func (e *Emitter) Flush(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for e.pending.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d events not written: %w", e.pending.Load(), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

var (
	invalidChars   = regexp.MustCompile(`[^a-z0-9\.\-]`)
	startsAlphaNum = regexp.MustCompile(`^[a-z0-9]`)
	endsAlphaNum   = regexp.MustCompile(`[a-z0-9]$`)
)

// sanitizeName is Kyverno's sanitizeEventName: the name of the object as
// an RFC 1123 subdomain.
func sanitizeName(name string) string {
	s := invalidChars.ReplaceAllString(strings.ToLower(name), "-")
	if s != "" && !startsAlphaNum.MatchString(s) {
		s = "a" + s
	}
	if s != "" && !endsAlphaNum.MatchString(s) {
		s += "z"
	}
	return s
}

// Event is the Event object of in, as Kyverno's emitEvent builds it (name
// "<object>.<time in hex ns>", the object's namespace or default, the
// message cut at MaxMessageLength, reportingInstance "<source>-<host>"),
// as a core/v1 Event.
func Event(in Info, host string, now time.Time) *corev1.Event {
	ns := in.Regarding.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	msg := in.Message
	if len(msg) > MaxMessageLength {
		msg = msg[:MaxMessageLength-3] + "..."
	}
	t := metav1.Time{Time: now}
	var related *corev1.ObjectReference
	if in.Related != nil {
		r := *in.Related
		related = &r
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%v.%x", sanitizeName(in.Regarding.Name), now.UnixNano()),
			Namespace: ns,
		},
		InvolvedObject: in.Regarding,
		Related:        related,
		Reason:         in.Reason,
		Message:        msg,
		Type:           in.Type(),
		Action:         in.Action,
		// The source too (deprecatedSource in events.k8s.io), as
		// client-go's recorder sets it: the correlator tells sources
		// apart by it, so that the same message from the scan and from
		// admission are two Events, as with Kyverno.
		Source:              corev1.EventSource{Component: in.Source, Host: host},
		ReportingController: in.Source,
		ReportingInstance:   in.Source + "-" + host,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
	}
}

// write correlates one event and writes it: a new Event, or the count of
// an existing one.
func (e *Emitter) write(ctx context.Context, in Info) {
	ev := Event(in, e.opts.Host, e.opts.Clock.Now())
	e.corrMu.Lock()
	res, err := e.correlator.EventCorrelate(ev)
	e.corrMu.Unlock()
	if err != nil {
		e.opts.Logger.Warn("event correlation", "error", err)
	}
	if res == nil || res.Skip {
		e.metrics.dropped.WithLabelValues("rate_limited").Inc()
		return
	}
	delay := e.opts.RetryDelay
	for try := 0; ; try++ {
		written, err := e.send(ctx, res.Event, res.Patch)
		if err == nil {
			e.corrMu.Lock()
			e.correlator.UpdateState(written)
			e.corrMu.Unlock()
			e.metrics.written.WithLabelValues(in.Reason).Inc()
			return
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) && !apierrors.IsServerTimeout(err) && !apierrors.IsTooManyRequests(err) && !apierrors.IsInternalError(err) && !apierrors.IsServiceUnavailable(err) {
			// The event itself is refused (invalid, namespace terminating,
			// already exists): sending it again changes nothing.
			e.metrics.dropped.WithLabelValues("rejected").Inc()
			e.opts.Logger.Debug("event rejected", "object", in.Regarding.Kind+"/"+in.Regarding.Name, "reason", in.Reason, "error", err)
			return
		}
		if try >= e.opts.Retries || ctx.Err() != nil {
			e.metrics.dropped.WithLabelValues("failed").Inc()
			e.opts.Logger.Warn("event dropped", "object", in.Regarding.Kind+"/"+in.Regarding.Name, "reason", in.Reason, "error", err)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// send creates ev, or patches its count when patch is set (creating it
// when it is gone), as client-go's recorder does.
func (e *Emitter) send(ctx context.Context, ev *corev1.Event, patch []byte) (*corev1.Event, error) {
	evs := e.opts.Client.CoreV1().Events(ev.Namespace)
	if len(patch) > 0 {
		out, err := evs.Patch(ctx, ev.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsNotFound(err) {
			return out, err
		}
	}
	c := ev.DeepCopy()
	c.ResourceVersion = ""
	return evs.Create(ctx, c, metav1.CreateOptions{})
}
