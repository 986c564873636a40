package promreg

import "github.com/prometheus/client_golang/prometheus"

// Builder creates metrics and registers them on its Registerer.
type Builder struct {
	reg prometheus.Registerer
	err error
}

// New returns a Builder that registers on reg.
func New(reg prometheus.Registerer) *Builder { return &Builder{reg: reg} }

// Err is the first registration error, if any.
func (b *Builder) Err() error { return b.err }

func register[C prometheus.Collector](b *Builder, c C) C {
	if err := b.reg.Register(c); err != nil && b.err == nil {
		b.err = err
	}
	return c
}

// Register registers a collector built elsewhere (such as the gRPC
// middleware's) and returns it.
func Register[C prometheus.Collector](b *Builder, c C) C { return register(b, c) }

// Counter is a counter named name.
func (b *Builder) Counter(name, help string) prometheus.Counter {
	return register(b, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

// CounterVec is a counter with labels.
func (b *Builder) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return register(b, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
}

// Gauge is a gauge named name.
func (b *Builder) Gauge(name, help string) prometheus.Gauge {
	return register(b, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

// GaugeVec is a gauge with labels.
func (b *Builder) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return register(b, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
}

// GaugeFunc is a gauge whose value f gives at each scrape.
func (b *Builder) GaugeFunc(name, help string, f func() float64) {
	register(b, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Histogram is a histogram with buckets.
func (b *Builder) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return register(b, prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}))
}

// HistogramVec is a histogram with buckets and labels.
func (b *Builder) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return register(b, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels))
}

// Kyverno's metrics are OpenTelemetry instruments of the meter "kyverno",
// exported to Prometheus by go.opentelemetry.io/otel/exporters/prometheus
// (pkg/metrics/metrics.go, NewPrometheusConfig): counters get the _total
// suffix, units are not appended (WithoutUnits), and every series carries
// the labels of its instrumentation scope. KyvernoScope are those labels,
// as a scrape of Kyverno shows them (the meter has no version and no
// schema URL).
var KyvernoScope = prometheus.Labels{
	"otel_scope_name":       "kyverno",
	"otel_scope_version":    "",
	"otel_scope_schema_url": "",
}

// KyvernoBuckets are the bucket boundaries of every histogram of Kyverno
// (pkg/config/metricsconfig.go, the default bucketBoundaries).
var KyvernoBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 20, 25, 30}

// Kyverno returns a Builder that registers on the same Registerer as b
// (and keeps its first error there too) metrics that carry KyvernoScope.
func (b *Builder) Kyverno() *KyvernoBuilder { return &KyvernoBuilder{b: b} }

// KyvernoBuilder declares metrics named and labelled as Kyverno's: every
// one carries KyvernoScope, histograms have KyvernoBuckets.
type KyvernoBuilder struct{ b *Builder }

// CounterVec is a counter with labels; name ends in _total, as the
// exporter names Kyverno's counters.
func (k *KyvernoBuilder) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return register(k.b, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: KyvernoScope}, labels))
}

// HistogramVec is a histogram with KyvernoBuckets and labels.
func (k *KyvernoBuilder) HistogramVec(name, help string, labels ...string) *prometheus.HistogramVec {
	return register(k.b, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: KyvernoBuckets, ConstLabels: KyvernoScope}, labels))
}

// GaugeVec is a gauge with labels.
func (k *KyvernoBuilder) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return register(k.b, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: KyvernoScope}, labels))
}

// Desc is the description of a metric a Collector of the caller's
// reports (such as a gauge computed at each scrape).
func (k *KyvernoBuilder) Desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, KyvernoScope)
}

// Collector registers c, a collector of the caller's.
func (k *KyvernoBuilder) Collector(c prometheus.Collector) { register(k.b, c) }
