package scanner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Scan modes, the mode label of the metrics.
const (
	modeFull   = "full"   // every resource, every policy
	modePolicy = "policy" // every resource, the policies that changed
	modeWatch  = "watch"  // the resources a watch saw change
)

// metrics are the scanner's Prometheus metrics. A nil *metrics records
// nothing.
type metrics struct {
	scans     *prometheus.CounterVec
	resources *prometheus.CounterVec
	failed    *prometheus.CounterVec
	events    *prometheus.CounterVec
	deleted   prometheus.Counter
	pending   prometheus.Gauge
	delay     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		scans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_scan_scans_total",
			Help: "Scans by mode (full, policy: a rescan of changed policies, watch: a round of watched changes) and outcome (ok, error).",
		}, []string{"mode", "outcome"}),
		resources: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_scan_resources_total",
			Help: "Resources evaluated in background mode, by scan mode.",
		}, []string{"mode"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_scan_not_evaluated_total",
			Help: "Resources the decision server could not evaluate, by scan mode.",
		}, []string{"mode"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_scan_watch_events_total",
			Help: "Watch events of the scanner's shard by type (add, update, delete) and action (queued; skipped: nothing a policy sees changed).",
		}, []string{"type", "action"}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_scan_watch_deleted_total",
			Help: "Deleted resources reported to the sink by a watch.",
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_scan_watch_pending",
			Help: "Watched changes waiting for a round.",
		}),
		delay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "verdict_scan_watch_delay_seconds",
			Help:    "Time from a watch event to the end of the round that handled it.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10, 30, 60},
		}),
	}
	for _, c := range []prometheus.Collector{m.scans, m.resources, m.failed, m.events, m.deleted, m.pending, m.delay} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) scanned(mode string, sum Summary, err error) {
	if m == nil {
		return
	}
	if mode == "" {
		mode = modeFull
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.scans.WithLabelValues(mode, outcome).Inc()
	m.resources.WithLabelValues(mode).Add(float64(sum.Resources))
	m.failed.WithLabelValues(mode).Add(float64(sum.Failed))
}

func (m *metrics) event(typ, action string) {
	if m != nil {
		m.events.WithLabelValues(typ, action).Inc()
	}
}

func (m *metrics) setPending(n int) {
	if m != nil {
		m.pending.Set(float64(n))
	}
}

func (m *metrics) handled(since time.Time, deleted bool) {
	if m == nil {
		return
	}
	m.delay.Observe(time.Since(since).Seconds())
	if deleted {
		m.deleted.Inc()
	}
}
