package webhookproxy

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/verdict-policy/verdict/internal/promreg"
)

// DefaultMetricsMaxSeries is the default of Options.MetricsMaxSeries.
const DefaultMetricsMaxSeries = 20000

// MetricsNamespaces selects, as Kyverno's metricsConfig.namespaces, the
// namespaces whose admission requests Kyverno's admission metrics count
// (promreg.Namespaces); requests for cluster-scoped resources are always
// counted.
type MetricsNamespaces = promreg.Namespaces

// kyvernoMetrics are the metrics of Kyverno's webhook server
// (pkg/metrics/admission.go, http.go; pkg/webhooks/handlers/metrics.go),
// with Kyverno's names, labels, label values and buckets as a Prometheus
// scrape of Kyverno shows them (promreg.KyvernoScope).
type kyvernoMetrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// cap bounds the (resource_kind, resource_namespace) pairs, the labels
	// that come from requests; namespaces filters them.
	cap        *promreg.SeriesCap
	namespaces MetricsNamespaces
	overflow   prometheus.Counter
}

var admissionLabels = []string{"resource_kind", "resource_namespace", "resource_request_operation", "request_allowed", "request_webhook"}

func newKyvernoMetrics(b *promreg.Builder, maxSeries int, namespaces MetricsNamespaces) *kyvernoMetrics {
	k := b.Kyverno()
	return &kyvernoMetrics{
		requests:     k.CounterVec("kyverno_admission_requests_total", "Admission reviews answered, as Kyverno's kyverno_admission_requests.", admissionLabels...),
		duration:     k.HistogramVec("kyverno_admission_review_duration_seconds", "Time to answer an admission review, as Kyverno's kyverno_admission_review_duration_seconds.", admissionLabels...),
		httpRequests: k.CounterVec("kyverno_http_requests_total", "HTTP requests to the webhook paths, as Kyverno's kyverno_http_requests (http_url is the path, without the query).", "http_method", "http_url"),
		httpDuration: k.HistogramVec("kyverno_http_requests_duration_seconds", "Time to answer an HTTP request to a webhook path, as Kyverno's kyverno_http_requests_duration_seconds.", "http_method", "http_url"),
		cap:          promreg.NewSeriesCap(maxSeries),
		namespaces:   namespaces,
		overflow:     b.Counter("verdict_webhook_metrics_label_overflow_total", "Admission reviews counted in kyverno_admission_requests_total with resource_kind and resource_namespace set to \""+promreg.Overflow+"\", because the cap on their pairs (--metrics-max-series) was reached."),
	}
}

// admission counts one answered review, as Kyverno's RecordRequest: the
// kind and namespace of the request, its operation in lower case, whether
// it was allowed and the kind of webhook configuration of the path.
func (k *kyvernoMetrics) admission(ep Endpoint, req *admissionv1.AdmissionRequest, allowed bool, start time.Time) {
	if req == nil || !k.namespaces.Counted(req.Namespace) {
		return
	}
	kind, namespace := req.Kind.Kind, req.Namespace
	if !k.cap.Admit(kind + "/" + namespace) {
		kind, namespace = promreg.Overflow, promreg.Overflow
		k.overflow.Inc()
	}
	webhook := "ValidatingWebhookConfiguration"
	if ep == Mutate {
		webhook = "MutatingWebhookConfiguration"
	}
	allowedLabel := "false"
	if allowed {
		allowedLabel = "true"
	}
	v := []string{kind, namespace, strings.ToLower(string(req.Operation)), allowedLabel, webhook}
	k.requests.WithLabelValues(v...).Inc()
	k.duration.WithLabelValues(v...).Observe(time.Since(start).Seconds())
}

// http counts one request to a webhook path (a fixed set: the label
// is bounded).
func (k *kyvernoMetrics) http(method, path string, start time.Time) {
	k.httpRequests.WithLabelValues(method, path).Inc()
	k.httpDuration.WithLabelValues(method, path).Observe(time.Since(start).Seconds())
}
