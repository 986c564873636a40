package scanner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/verdict-policy/verdict/internal/promreg"
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
	b := promreg.New(reg)
	m := &metrics{
		scans:     b.CounterVec("verdict_scan_scans_total", "Scans by mode (full, policy: a rescan of changed policies, watch: a round of watched changes) and outcome (ok, error).", "mode", "outcome"),
		resources: b.CounterVec("verdict_scan_resources_total", "Resources evaluated in background mode, by scan mode.", "mode"),
		failed:    b.CounterVec("verdict_scan_not_evaluated_total", "Resources the decision server could not evaluate, by scan mode.", "mode"),
		events:    b.CounterVec("verdict_scan_watch_events_total", "Watch events of the scanner's shard by type (add, update, delete) and action (queued; skipped: nothing a policy sees changed).", "type", "action"),
		deleted:   b.Counter("verdict_scan_watch_deleted_total", "Deleted resources reported to the sink by a watch."),
		pending:   b.Gauge("verdict_scan_watch_pending", "Watched changes waiting for a round."),
		delay:     b.Histogram("verdict_scan_watch_delay_seconds", "Time from a watch event to the end of the round that handled it.", []float64{.05, .1, .25, .5, 1, 2, 5, 10, 30, 60}),
	}
	return m, b.Err()
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
