package reportwriter

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/verdict-policy/verdict/internal/promreg"
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
	b := promreg.New(reg)
	m := &metrics{
		batches:       b.Counter("verdict_reports_batches_total", "Batches received (Publish and in-process)."),
		entries:       b.Counter("verdict_reports_entries_total", "Rule results received."),
		duplicates:    b.Counter("verdict_reports_duplicates_total", "Items that changed nothing: already applied, or older than the state held."),
		rejected:      b.Counter("verdict_reports_rejected_total", "Items not applied because they are not valid."),
		exhausted:     b.CounterVec("verdict_reports_limit_exceeded_total", "Publish streams ended because a limit was exceeded, by limit.", "limit"),
		storeWrites:   b.Counter("verdict_reports_store_writes_total", "Store transactions (one per flush)."),
		storeErrors:   b.Counter("verdict_reports_store_write_errors_total", "Store transactions that failed."),
		reports:       b.Gauge("verdict_reports_final_reports", "Final reports (PolicyReports and ClusterPolicyReports) held."),
		streams:       b.Gauge("verdict_reports_publish_streams", "Publish streams open."),
		flushSeconds:  b.Histogram("verdict_reports_flush_seconds", "Time to render the changed reports and write one flush to the store.", prometheus.ExponentialBuckets(0.0005, 2, 14)),
		held:          b.Gauge("verdict_reports_held_batches", "Batches applied and written locally whose acknowledgement waits until their reports are durable in the API server."),
		ackSeconds:    b.Histogram("verdict_reports_ack_seconds", "Time from the arrival of a batch to its acknowledgement.", prometheus.ExponentialBuckets(0.001, 2, 16)),
		future:        b.CounterVec("verdict_reports_future_time_rejected_total", "Items rejected because their time is later than the writer's clock plus the max clock skew, by field.", "field"),
		repaired:      b.CounterVec("verdict_reports_future_time_repaired_total", "Times later than the writer's clock plus the max clock skew removed from the stored state at start (written before the check), by what held them.", "what"),
		overLimit:     b.CounterVec("verdict_reports_items_over_limit_total", "Items rejected because the writer holds the most resources, tombstones or policy senders it may, by limit.", "limit"),
		inflightBytes: b.Gauge("verdict_reports_inflight_bytes", "Bytes of the Publish batches received and not acknowledged yet, over every stream (at most the max in-flight bytes)."),
		tombsSkipped:  b.Counter("verdict_reports_tombstones_skipped_total", "Deletions applied without a tombstone because the writer remembers the max tombstones."),
	}
	return m, b.Err()
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
