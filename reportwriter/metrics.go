package reportwriter

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the writer's Prometheus metrics.
type metrics struct {
	batches       prometheus.Counter
	entries       prometheus.Counter
	duplicates    prometheus.Counter
	rejected      prometheus.Counter
	exhausted     *prometheus.CounterVec
	storeWrites   prometheus.Counter
	storeErrors   prometheus.Counter
	reports       prometheus.Gauge
	streams       prometheus.Gauge
	flushSeconds  prometheus.Histogram
	held          prometheus.Gauge
	ackSeconds    prometheus.Histogram
	future        *prometheus.CounterVec
	repaired      *prometheus.CounterVec
	overLimit     *prometheus.CounterVec
	tombsSkipped  prometheus.Counter
	inflightBytes prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_batches_total", Help: "Batches received (Publish and in-process)."}),
		entries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_entries_total", Help: "Rule results received."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_duplicates_total", Help: "Items that changed nothing: already applied, or older than the state held."}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_rejected_total", Help: "Items not applied because they are not valid."}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_reports_limit_exceeded_total", Help: "Publish streams ended because a limit was exceeded, by limit."}, []string{"limit"}),
		storeWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_store_writes_total", Help: "Store transactions (one per flush)."}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_store_write_errors_total", Help: "Store transactions that failed."}),
		reports: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_reports_final_reports", Help: "Final reports (PolicyReports and ClusterPolicyReports) held."}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_reports_publish_streams", Help: "Publish streams open."}),
		flushSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "verdict_reports_flush_seconds", Help: "Time to render the changed reports and write one flush to the store.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_reports_held_batches", Help: "Batches applied and written locally whose acknowledgement waits until their reports are durable in the API server."}),
		ackSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "verdict_reports_ack_seconds", Help: "Time from the arrival of a batch to its acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		future: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_reports_future_time_rejected_total", Help: "Items rejected because their time is later than the writer's clock plus the max clock skew, by field."}, []string{"field"}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_reports_future_time_repaired_total", Help: "Times later than the writer's clock plus the max clock skew removed from the stored state at start (written before the check), by what held them."}, []string{"what"}),
		overLimit: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_reports_items_over_limit_total", Help: "Items rejected because the writer holds the most resources, tombstones or policy senders it may, by limit."}, []string{"limit"}),
		inflightBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_reports_inflight_bytes", Help: "Bytes of the Publish batches received and not acknowledged yet, over every stream (at most the max in-flight bytes)."}),
		tombsSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_reports_tombstones_skipped_total", Help: "Deletions applied without a tombstone because the writer remembers the max tombstones."}),
	}
	for _, c := range []prometheus.Collector{m.batches, m.entries, m.duplicates, m.rejected, m.exhausted, m.storeWrites, m.storeErrors, m.reports, m.streams, m.flushSeconds, m.held, m.ackSeconds, m.future, m.repaired, m.overLimit, m.tombsSkipped, m.inflightBytes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func sortReports(rs []*StoredReport) {
	slices.SortFunc(rs, func(a, b *StoredReport) int {
		return cmp.Or(
			cmp.Compare(a.Key.Kind(), b.Key.Kind()),
			cmp.Compare(a.Key.Namespace, b.Key.Namespace),
			cmp.Compare(a.Key.Name, b.Key.Name),
		)
	})
}
