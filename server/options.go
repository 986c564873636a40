package server

import (
	"cmp"
	"crypto/tls"
	"log/slog"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/promreg"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// Defaults of Options.
const (
	DefaultCacheSize             = 1024
	DefaultMaxMessageBytes       = 4 << 20
	DefaultCallTimeout           = 10 * time.Second
	DefaultMaxConcurrentStreams  = 1024
	DefaultMaxBatchSize          = 1000
	DefaultShutdownTimeout       = 30 * time.Second
	DefaultMaxConnectionAge      = 10 * time.Minute
	DefaultMetricsMaxSeries      = 20000
	DefaultMaxRequestPolicyBytes = 512 << 10
	DefaultMaxRequestPolicyRules = 256
	DefaultInlineCacheBytes      = 128 << 20
	DefaultMaxCELDataCalls       = 32
)

// Options configure a Server. The zero value is usable: every field has a
// default, filled by withDefaults at the top of New.
type Options struct {
	// Sources feed the policy store. Default: none (every request must
	// then carry inline policies).
	Sources []PolicySource

	// Logger receives the server's logs: one line per call (successful
	// and cancelled calls at debug, others at info, warn or error),
	// policy loads and errors.
	// Default: discard.
	Logger *slog.Logger

	// Registry receives the server's metrics. Default: a new registry,
	// served by Server.MetricsHandler.
	Registry *prometheus.Registry

	// MetricsMaxSeries caps the series of verdict_policy_results_total
	// (and so those of Kyverno's result metrics, kyverno_policy_results_total
	// and the others, which follow them) whose labels come from requests:
	// resource_kind and resource_namespace, and policy_name,
	// policy_namespace and rule_name for inline policies. Past the cap, a
	// result that would start a new series is counted in the series whose
	// request-derived labels are OverflowLabel ("_overflow"), and in
	// verdict_metrics_label_overflow_total. A series takes about 7 KB with
	// Kyverno's counter and histogram of the same labels (2 KB for
	// verdict_policy_results_total alone), 140 MB at the default cap, and
	// more while it is scraped. Default 20000.
	MetricsMaxSeries int

	// MetricsNamespaces selects, as Kyverno's metricsConfig.namespaces, the
	// resource namespaces whose results verdict_policy_results_total and
	// Kyverno's result metrics count. Default: every namespace.
	MetricsNamespaces NamespaceFilter

	// NoKyvernoResultMetrics leaves out Kyverno's result metrics
	// (kyverno_policy_results_total, kyverno_policy_execution_duration_seconds
	// and those of the policies.kyverno.io kinds), which take about 5 KB of
	// the 7 KB of a series; verdict_policy_results_total has the same
	// counts. Kyverno's rule info and policy changes stay. Default: false,
	// they are exported.
	NoKyvernoResultMetrics bool

	// CacheSize is the number of compiled policy documents kept in each
	// of the two LRUs: one for the policies of the sources, one for
	// inline documents. Default 1024.
	CacheSize int

	// InlineCacheBytes bounds the memory held by the compiled inline
	// policies of the cache, measured when each is compiled (memSize):
	// least recently used documents are evicted past it, and a document
	// whose compilation alone takes more is refused with
	// RESOURCE_EXHAUSTED (the refusal is cached: sending it again
	// compiles nothing). Default 128 MiB.
	InlineCacheBytes int64

	// MaxRequestPolicyBytes and MaxRequestPolicyRules bound the policies
	// one request has the server compile, before anything is compiled:
	// the inline policies of an evaluation (or of one stream item), all
	// its documents together, or the call fails with RESOURCE_EXHAUSTED;
	// and each document (bytes) and policy (rules) of a ValidatePolicies
	// call, or that document gets a CodeLimitExceeded error (so that
	// /policyvalidate refuses the policy). Rules are counted as written,
	// before autogen adds up to two per Pod rule. A compiled policy takes
	// from 2 to 140 times its bytes, and a CEL rule about 80 KB (times 3
	// with autogen). The message limit (MaxMessageBytes) applies first.
	// Defaults 512 KiB and 256 rules.
	MaxRequestPolicyBytes int
	MaxRequestPolicyRules int

	// MaxEvaluationSteps bounds the work of one evaluation (one resource
	// against the policies of a call), in the engine's steps
	// (eval.Options.MaxSteps): the rule that goes past it reports an error
	// with code budget_exceeded, and the rules after it too. CallTimeout
	// bounds the evaluation as well, from inside the engine's loops.
	// Default eval.DefaultMaxSteps; negative: no step limit.
	MaxEvaluationSteps int64

	// MaxMessageBytes limits the size of a received message; a larger
	// request fails with RESOURCE_EXHAUSTED. Sent messages are not limited
	// by the server (the client's receive limit applies). Default 4 MiB.
	MaxMessageBytes int

	// CallTimeout bounds each unary call and each batch of a stream; a
	// client deadline that is shorter wins. Default 10s.
	CallTimeout time.Duration

	// MaxConcurrentStreams limits the calls in flight on one client
	// connection (HTTP/2 concurrent streams); a client waits for a free
	// stream. Default 1024.
	MaxConcurrentStreams uint32

	// MaxBatchSize limits the requests of one EvaluateStream batch; a
	// larger batch ends the stream with RESOURCE_EXHAUSTED. Default 1000.
	MaxBatchSize int

	// StreamWorkers is the number of requests of one batch evaluated in
	// parallel. Default: GOMAXPROCS.
	StreamWorkers int

	// MaxEvaluations limits the evaluations (of unary calls and stream
	// items together) that run at once; others wait in line, first come
	// first served, and fail with DEADLINE_EXCEEDED if their deadline
	// passes there. An evaluation waiting for cluster data or a registry
	// does not hold its place. Default: GOMAXPROCS; negative: no limit.
	MaxEvaluations int

	// TLS serves TLS with this configuration; set ClientCAs and
	// ClientAuth (see TLSConfig) to require client certificates (mTLS).
	// Default: plain text.
	TLS *tls.Config

	// BearerTokens, when not empty, are the tokens accepted in the
	// "authorization: bearer <token>" metadata of every call except health
	// checks; other calls fail with UNAUTHENTICATED. Default: no token
	// check.
	BearerTokens []string

	// Lookup supplies cluster data (ConfigMaps, API calls) to context
	// entries. Default: none; such entries fail.
	Lookup eval.Lookup

	// CELData are the data sources of Kyverno's CEL libraries (resource,
	// http, image.GetMetadata, globalContext) for ValidatingPolicies
	// (kubelookup.Lookup.CELSources in a cluster, server/celdata for
	// http and image data). Default: none; those calls are errors of the
	// expression.
	CELData kyvernocel.Sources
	// MaxCELDataCalls bounds the calls one evaluation makes to the
	// sources of CELData that leave the process (resource.*, http.*,
	// image.GetMetadata; globalContext.Get reads memory and is not
	// counted): past it, each call fails with an error naming the limit.
	// Default DefaultMaxCELDataCalls (32).
	MaxCELDataCalls int
	// CELHTTPInlinePolicies lets inline policies call http.*. Default
	// false: whoever may call Evaluate could otherwise make the server
	// send requests wherever CELData.HTTP allows, with every inline
	// policy.
	CELHTTPInlinePolicies bool
	// CELHTTPNamespacedPolicies lets NamespacedValidatingPolicies call
	// http.*. Default false, as Kyverno's
	// --allowHTTPInNamespacedPolicies: a namespace's users would
	// otherwise make the server send requests.
	CELHTTPNamespacedPolicies bool

	// TracerProvider, when set, traces every call (OpenTelemetry, through
	// otelgrpc: the caller's trace context is continued) with a child
	// span around the engine's evaluation. Default: no tracing.
	TracerProvider trace.TracerProvider

	// ImageVerifier checks image signatures and attestations for
	// verifyImages rules. Default: none; such rules report an error.
	ImageVerifier eval.ImageVerifier
	// ImageVerifyInlinePolicies lets an evaluation whose inline policies
	// hold an ImageValidatingPolicy reach registries. Default false: its
	// ImageVerifier calls are refused (the image functions fail), so that
	// a caller of Evaluate cannot make the server contact registries of
	// its choosing.
	ImageVerifyInlinePolicies bool

	// Reports receives the item of every evaluation (publish.Item) for
	// the report writer, offered without waiting: the sink's queue is the
	// one buffer between the server and the writer, and an item it has no
	// room for is dropped and counted (verdict_results_dropped_total here,
	// verdict_report_publisher_undelivered_total there), never waited for.
	// Default: none.
	Reports publish.Sink

	// ShutdownTimeout bounds the wait for in-flight calls when Run's
	// context ends; calls still running then are cancelled. Default 30s.
	ShutdownTimeout time.Duration
	// DrainDelay is the time between reporting NOT_SERVING and refusing
	// new calls, so that load balancers stop sending first. Default 0.
	DrainDelay time.Duration
	// MaxConnectionAge closes a client connection (with a GOAWAY, calls in
	// flight finish within ShutdownTimeout) after this age, give or take
	// 10%, so that clients resolve the headless Service again and spread
	// over replicas added since they connected. Default 10m; negative:
	// never.
	MaxConnectionAge time.Duration

	// evalHook, when set, is called with every request before it is
	// evaluated (a test seam: it may panic or block).
	evalHook func(*verdictv1.EvaluateRequest)
	// slotHook, when set, is called with every request once it holds an
	// evaluation slot (MaxEvaluations; a test seam: it may block).
	slotHook func(*verdictv1.EvaluateRequest)
}

// withDefaults returns o with every unset field set to its default.
func (o Options) withDefaults() Options {
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	options.Positive(&o.MetricsMaxSeries, DefaultMetricsMaxSeries)
	options.Positive(&o.CacheSize, DefaultCacheSize)
	options.Positive(&o.InlineCacheBytes, DefaultInlineCacheBytes)
	options.Positive(&o.MaxRequestPolicyBytes, DefaultMaxRequestPolicyBytes)
	options.Positive(&o.MaxRequestPolicyRules, DefaultMaxRequestPolicyRules)
	options.Positive(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	options.Positive(&o.CallTimeout, DefaultCallTimeout)
	o.MaxConcurrentStreams = cmp.Or(o.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
	options.Positive(&o.MaxBatchSize, DefaultMaxBatchSize)
	options.Positive(&o.StreamWorkers, runtime.GOMAXPROCS(0))
	o.MaxEvaluations = cmp.Or(o.MaxEvaluations, runtime.GOMAXPROCS(0))
	o.MaxConnectionAge = cmp.Or(o.MaxConnectionAge, DefaultMaxConnectionAge)
	options.Positive(&o.ShutdownTimeout, DefaultShutdownTimeout)
	options.Positive(&o.MaxCELDataCalls, DefaultMaxCELDataCalls)
	return o
}

// NamespaceFilter selects namespaces as Kyverno's metricsConfig.namespaces
// does (promreg.Namespaces). (Kyverno v1.19 applies the filter to
// kyverno_policy_results by the policy's namespace; Verdict applies it to
// the resource's, which is the same for a namespaced Policy and is the
// label that requests control.)
type NamespaceFilter = promreg.Namespaces

// resultLimits returns the limits of verdict_policy_results_total.
func (o Options) resultLimits() resultLimits {
	return resultLimits{maxSeries: int64(o.MetricsMaxSeries), namespaces: o.MetricsNamespaces, noKyverno: o.NoKyvernoResultMetrics}
}
