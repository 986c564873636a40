package webhookproxy

import (
	"cmp"
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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/promreg"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
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
	// be made at /validate and /mutate; by default it is denied (fail
	// closed, as Kyverno's failurePolicy Fail). The paths per failure
	// policy (/validate/fail, /validate/ignore, ...) do not read it: their
	// failure policy decides.
	FailOpen bool

	// MaxBodyBytes limits the size of a review; a larger one gets 413.
	// Default DefaultMaxBodyBytes (3.25 MiB).
	MaxBodyBytes int64

	// Namespaces supplies the labels of the request's namespace. Default:
	// none, namespaces have no labels.
	Namespaces NamespaceLabels

	// Generator takes the generate intents of the requests that the
	// validate paths admit (not dry-run). Default: none, intents are
	// dropped.
	Generator Generator

	// Logger receives one line per failed decision or bad review.
	// Default: discard.
	Logger *slog.Logger

	// Registry receives the metrics. Default: a new registry.
	Registry *prometheus.Registry

	// MetricsMaxSeries caps the pairs of resource_kind and
	// resource_namespace, the labels of kyverno_admission_requests_total
	// and kyverno_admission_review_duration_seconds that come from
	// requests; past it, reviews are counted under "_overflow" and in
	// verdict_webhook_metrics_label_overflow_total. Default
	// DefaultMetricsMaxSeries (20000).
	MetricsMaxSeries int

	// MetricsNamespaces selects the namespaces those metrics count.
	// Default: every namespace.
	MetricsNamespaces MetricsNamespaces
}

func (o Options) withDefaults() Options {
	options.Positive(&o.Timeout, DefaultTimeout)
	options.Positive(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	options.Positive(&o.MetricsMaxSeries, DefaultMetricsMaxSeries)
	if o.Namespaces == nil {
		o.Namespaces = MapNamespaceLabels(nil)
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	return o
}

// Handler serves /validate and /mutate, the same per failure policy
// (/validate/fail, /validate/ignore, /mutate/fail, /mutate/ignore), and
// /healthz. It is safe for concurrent use.
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
	m, err := newMetrics(o.Registry, o.MetricsMaxSeries, o.MetricsNamespaces)
	if err != nil {
		return nil, err
	}
	h := &Handler{decider: decider, opts: o, mux: http.NewServeMux(), metrics: m}
	for _, rt := range routes(o.FailOpen) {
		h.mux.HandleFunc("POST "+rt.path, func(w http.ResponseWriter, r *http.Request) { h.review(w, r, rt) })
	}
	if pv, ok := decider.(PolicyValidator); ok {
		h.mux.HandleFunc("POST "+policyValidatePath, func(w http.ResponseWriter, r *http.Request) { h.validatePolicy(w, r, pv) })
	}
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// route is one webhook path: the endpoint kind, the failure policy of
// the policies it evaluates (unspecified: all) and whether it fails open.
type route struct {
	path     string // also the endpoint label of the metrics, without "/"
	ep       Endpoint
	policies verdictv1.FailurePolicy
	failOpen bool
}

// routes are the webhook paths: /validate and /mutate evaluate every
// policy and fail as failOpen says; the paths per failure policy, as
// Kyverno registers them, evaluate the policies of that failure policy
// and fail as it says.
func routes(failOpen bool) []route {
	const fail, ignore = verdictv1.FailurePolicy_FAILURE_POLICY_FAIL, verdictv1.FailurePolicy_FAILURE_POLICY_IGNORE
	return []route{
		{path: "/validate", ep: Validate, failOpen: failOpen},
		{path: "/validate/fail", ep: Validate, policies: fail},
		{path: "/validate/ignore", ep: Validate, policies: ignore, failOpen: true},
		{path: "/mutate", ep: Mutate, failOpen: failOpen},
		{path: "/mutate/fail", ep: Mutate, policies: fail},
		{path: "/mutate/ignore", ep: Mutate, policies: ignore, failOpen: true},
	}
}

// review answers one AdmissionReview.
func (h *Handler) review(w http.ResponseWriter, r *http.Request, rt route) {
	start := time.Now()
	defer h.metrics.kyverno.http(r.Method, rt.path, start)
	label := rt.path[1:]
	ar, code, err := h.decode(w, r)
	if err != nil {
		h.metrics.requests.WithLabelValues(label, "bad_request").Inc()
		h.opts.Logger.Info("bad admission review", "endpoint", label, "error", err)
		http.Error(w, err.Error(), code)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout(r))
	defer cancel()
	resp, dec, err := h.decide(ctx, rt, ar.Request)
	if err != nil {
		var bad *badRequest
		if errors.As(err, &bad) {
			h.metrics.requests.WithLabelValues(label, "bad_request").Inc()
			http.Error(w, bad.Error(), http.StatusBadRequest)
			return
		}
		if errors.Is(err, ErrNamespacesNotSynced) {
			h.metrics.unsynced.Inc()
		}
		h.metrics.failures.WithLabelValues(label, failMode(rt.failOpen)).Inc()
		h.opts.Logger.Warn("no policy decision", "endpoint", label, "uid", ar.Request.UID, "fail_open", rt.failOpen, "error", err)
		resp = failureResponse(ar.Request, rt.failOpen, err)
	}
	outcome := "allowed"
	if !resp.Allowed {
		outcome = "denied"
	}
	if rt.ep == Validate && resp.Allowed && len(dec.GetGenerates()) > 0 && h.opts.Generator != nil &&
		(ar.Request.DryRun == nil || !*ar.Request.DryRun) {
		h.opts.Generator.Generate(trigger(ar.Request, dec), dec.GetGenerates())
	}
	h.metrics.requests.WithLabelValues(label, outcome).Inc()
	h.metrics.duration.WithLabelValues(label).Observe(time.Since(start).Seconds())
	h.metrics.kyverno.admission(rt.ep, ar.Request, resp.Allowed, start)
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

// decide asks the Decider about ar and returns the answer and the
// server's decision (nil when the server was not asked).
func (h *Handler) decide(ctx context.Context, rt route, ar *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, *verdictv1.EvaluateResponse, error) {
	if rt.ep == Mutate && ar.Operation == admissionv1.Delete {
		// Kyverno's mutating webhook takes CREATE, UPDATE and CONNECT
		// only: nothing to mutate on a DELETE.
		if _, err := RequestFromAdmission(ar, nil); err != nil {
			return nil, nil, &badRequest{err}
		}
		return &admissionv1.AdmissionResponse{UID: ar.UID, Allowed: true}, nil, nil
	}
	var labels map[string]string
	if ar.Namespace != "" && ar.Kind.Kind != "Namespace" {
		var err error
		if labels, err = h.opts.Namespaces.NamespaceLabels(ctx, ar.Namespace); err != nil {
			return nil, nil, fmt.Errorf("labels of namespace %s: %w", ar.Namespace, err)
		}
	}
	req, err := RequestFromAdmission(ar, labels)
	if err != nil {
		return nil, nil, &badRequest{err}
	}
	// The validate paths report the request (with the object as stored,
	// UID included); the mutate paths only answer it.
	req.SkipReport = rt.ep == Mutate
	if rt.policies != verdictv1.FailurePolicy_FAILURE_POLICY_UNSPECIFIED {
		req.Policies = &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{FailurePolicy: rt.policies}}
	}
	resp, err := h.decider.Evaluate(ctx, req)
	if err != nil {
		if s, ok := status.FromError(err); ok {
			return nil, nil, fmt.Errorf("decision server: %s: %s", s.Code(), s.Message())
		}
		return nil, nil, fmt.Errorf("decision server: %w", err)
	}
	return ResponseFromDecision(rt.ep, ar, resp), resp, nil
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
	ar, err := decodeReview(body)
	if err != nil {
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
	return ar, 0, nil
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
	unsynced prometheus.Counter
	duration *prometheus.HistogramVec
	// kyverno are Kyverno's own metrics (kyverno_metrics.go).
	kyverno *kyvernoMetrics
}

func newMetrics(reg *prometheus.Registry, maxSeries int, namespaces MetricsNamespaces) (*metrics, error) {
	b := promreg.New(reg)
	m := &metrics{
		requests: b.CounterVec("verdict_webhook_requests_total", "Admission reviews answered, by endpoint and outcome (allowed, denied, bad_request).", "endpoint", "outcome"),
		failures: b.CounterVec("verdict_webhook_decider_failures_total", "Admission reviews without a policy decision (decision server or namespace labels failed), by endpoint and failure mode (open, closed).", "endpoint", "mode"),
		unsynced: b.Counter("verdict_webhook_namespace_cache_unsynced_total", "Admission reviews that failed because the namespace cache had not synced with the API server (also counted in verdict_webhook_decider_failures_total)."),
		duration: b.HistogramVec("verdict_webhook_request_duration_seconds", "Time to answer an admission review, by endpoint.", []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "endpoint"),
		kyverno:  newKyvernoMetrics(b, maxSeries, namespaces),
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	return m, nil
}

// trigger is the Trigger of an admitted request's generate intents.
func trigger(r *admissionv1.AdmissionRequest, dec *verdictv1.EvaluateResponse) Trigger {
	t := Trigger{
		UID:        string(r.UID),
		APIVersion: schema.GroupVersion{Group: r.Kind.Group, Version: r.Kind.Version}.String(),
		Kind:       r.Kind.Kind, Namespace: r.Namespace, Name: r.Name,
		PolicyKinds: map[string]string{},
	}
	for _, p := range dec.GetPolicies() {
		key := p.GetName()
		if p.GetNamespace() != "" {
			key = p.GetNamespace() + "/" + key
		}
		t.PolicyKinds[key] = p.GetKind()
	}
	return t
}
