package webhookproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"
	admissionv1 "k8s.io/api/admission/v1"
)

// Defaults of Options.
const (
	// DefaultTimeout leaves 2 s of Kubernetes' default webhook timeout
	// (10 s) for the answer to travel back.
	DefaultTimeout = 8 * time.Second
	// DefaultMaxBodyBytes is above the largest request the API server
	// sends (3 MiB objects, plus the review around them).
	DefaultMaxBodyBytes = 3<<20 + 256<<10
)

// Options configure a Handler. The zero value is usable.
type Options struct {
	// Timeout bounds the decision of one review. When the API server's
	// own timeout (the "timeout" query parameter it adds to every webhook
	// call) is shorter, four fifths of it are used instead. Default
	// DefaultTimeout (8 s).
	Timeout time.Duration

	// FailOpen allows the request (with a warning) when no decision can
	// be made; by default it is denied (fail closed, as Kyverno's
	// failurePolicy Fail).
	FailOpen bool

	// MaxBodyBytes limits the size of a review; a larger one gets 413.
	// Default DefaultMaxBodyBytes (3.25 MiB).
	MaxBodyBytes int64

	// Namespaces supplies the labels of the request's namespace. Default:
	// none, namespaces have no labels.
	Namespaces NamespaceLabels

	// Logger receives one line per failed decision or bad review.
	// Default: discard.
	Logger *slog.Logger

	// Registry receives the metrics. Default: a new registry.
	Registry *prometheus.Registry
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Namespaces == nil {
		o.Namespaces = MapNamespaceLabels(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	return o
}

// Handler serves /validate and /mutate (and /healthz). It is safe for
// concurrent use.
type Handler struct {
	decider Decider
	opts    Options
	mux     *http.ServeMux
	metrics *metrics
}

// New returns a Handler that asks decider.
func New(decider Decider, opts Options) (*Handler, error) {
	if decider == nil {
		return nil, errors.New("webhookproxy: nil Decider")
	}
	o := opts.withDefaults()
	m, err := newMetrics(o.Registry)
	if err != nil {
		return nil, err
	}
	h := &Handler{decider: decider, opts: o, mux: http.NewServeMux(), metrics: m}
	h.mux.HandleFunc("POST /validate", func(w http.ResponseWriter, r *http.Request) { h.review(w, r, Validate) })
	h.mux.HandleFunc("POST /mutate", func(w http.ResponseWriter, r *http.Request) { h.review(w, r, Mutate) })
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// review answers one AdmissionReview.
func (h *Handler) review(w http.ResponseWriter, r *http.Request, ep Endpoint) {
	start := time.Now()
	ar, code, err := h.decode(w, r)
	if err != nil {
		h.metrics.requests.WithLabelValues(string(ep), "bad_request").Inc()
		h.opts.Logger.Info("bad admission review", "endpoint", ep, "error", err)
		http.Error(w, err.Error(), code)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout(r))
	defer cancel()
	resp, err := h.decide(ctx, ep, ar.Request)
	if err != nil {
		var bad *badRequest
		if errors.As(err, &bad) {
			h.metrics.requests.WithLabelValues(string(ep), "bad_request").Inc()
			http.Error(w, bad.Error(), http.StatusBadRequest)
			return
		}
		h.metrics.failures.WithLabelValues(string(ep), failMode(h.opts.FailOpen)).Inc()
		h.opts.Logger.Warn("no policy decision", "endpoint", ep, "uid", ar.Request.UID, "fail_open", h.opts.FailOpen, "error", err)
		resp = failureResponse(ar.Request, h.opts.FailOpen, err)
	}
	outcome := "allowed"
	if !resp.Allowed {
		outcome = "denied"
	}
	h.metrics.requests.WithLabelValues(string(ep), outcome).Inc()
	h.metrics.duration.WithLabelValues(string(ep)).Observe(time.Since(start).Seconds())
	out := admissionv1.AdmissionReview{TypeMeta: ar.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&out); err != nil {
		h.opts.Logger.Info("write admission response", "error", err)
	}
}

// badRequest is a review the decision service cannot take.
type badRequest struct{ err error }

func (b *badRequest) Error() string { return b.err.Error() }
func (b *badRequest) Unwrap() error { return b.err }

// decide asks the Decider about ar.
func (h *Handler) decide(ctx context.Context, ep Endpoint, ar *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	var labels map[string]string
	if ar.Namespace != "" && ar.Kind.Kind != "Namespace" {
		var err error
		if labels, err = h.opts.Namespaces.NamespaceLabels(ctx, ar.Namespace); err != nil {
			return nil, fmt.Errorf("labels of namespace %s: %w", ar.Namespace, err)
		}
	}
	req, err := RequestFromAdmission(ar, labels)
	if err != nil {
		return nil, &badRequest{err}
	}
	resp, err := h.decider.Evaluate(ctx, req)
	if err != nil {
		if s, ok := status.FromError(err); ok {
			return nil, fmt.Errorf("decision server: %s: %s", s.Code(), s.Message())
		}
		return nil, fmt.Errorf("decision server: %w", err)
	}
	return ResponseFromDecision(ep, ar, resp), nil
}

// timeout is the deadline of one review: Options.Timeout, or four fifths
// of the API server's timeout when that is shorter.
func (h *Handler) timeout(r *http.Request) time.Duration {
	d := h.opts.Timeout
	if q := r.URL.Query().Get("timeout"); q != "" {
		if t, err := time.ParseDuration(q); err == nil && t > 0 && t*4/5 < d {
			d = t * 4 / 5
		}
	}
	return d
}

// decode reads and checks an AdmissionReview; the int is the HTTP status
// of an error.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionReview, int, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: want application/json", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("admission review larger than %d bytes", h.opts.MaxBodyBytes)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("read admission review: %w", err)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &ar); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("admission review: not valid JSON: %w", err)
	}
	if ar.APIVersion != "admission.k8s.io/v1" || ar.Kind != "AdmissionReview" {
		return nil, http.StatusBadRequest, fmt.Errorf("apiVersion %q, kind %q: want admission.k8s.io/v1 AdmissionReview", ar.APIVersion, ar.Kind)
	}
	if ar.Request == nil {
		return nil, http.StatusBadRequest, errors.New("admission review: request missing")
	}
	if ar.Request.UID == "" {
		return nil, http.StatusBadRequest, errors.New("admission review: request.uid missing")
	}
	return &ar, 0, nil
}

func failMode(open bool) string {
	if open {
		return "open"
	}
	return "closed"
}

// metrics are the Handler's Prometheus metrics.
type metrics struct {
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_webhook_requests_total",
			Help: "Admission reviews answered, by endpoint and outcome (allowed, denied, bad_request).",
		}, []string{"endpoint", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_webhook_decider_failures_total",
			Help: "Admission reviews without a policy decision (decision server or namespace labels failed), by endpoint and failure mode (open, closed).",
		}, []string{"endpoint", "mode"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "verdict_webhook_request_duration_seconds",
			Help:    "Time to answer an admission review, by endpoint.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"endpoint"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.failures, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return m, nil
}
