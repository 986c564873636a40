package server

import (
	"strings"
	"sync"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
)

// metrics are the server's Prometheus metrics. gRPC request counts and
// latency histograms come from go-grpc-middleware's provider (grpc_server_*);
// the rest are Verdict's own (verdict_*).
type metrics struct {
	grpc *grpcprom.ServerMetrics

	// policyResults counts rule results, with the labels of Kyverno's
	// kyverno_policy_results metric.
	policyResults *prometheus.CounterVec
	// resultCounters caches the counters of policyResults by label values:
	// requestLabels -> *sync.Map of ruleLabels -> prometheus.Counter.
	resultCounters sync.Map

	cacheHits      prometheus.Counter
	cacheMisses    prometheus.Counter
	cacheEvictions prometheus.Counter
	cacheSize      prometheus.Gauge
	compiles       prometheus.Counter

	policies      *prometheus.GaugeVec
	reloads       *prometheus.CounterVec
	resultsQueued prometheus.Counter
	resultsDrop   prometheus.Counter
	sinkErrors    prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		grpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}),
		)),
		policyResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_policy_results_total",
			Help: "Rule results, labelled as Kyverno's kyverno_policy_results.",
		}, []string{
			"policy_validation_mode", "policy_type", "policy_background_mode",
			"policy_name", "policy_namespace", "resource_kind", "resource_namespace",
			"resource_request_operation", "rule_name", "rule_result", "rule_type",
			"rule_execution_cause",
		}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_policy_cache_hits_total",
			Help: "Lookups of compiled policies found in the cache.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_policy_cache_misses_total",
			Help: "Lookups of compiled policies not found in the cache.",
		}),
		cacheEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_policy_cache_evictions_total",
			Help: "Compiled policies evicted from the cache.",
		}),
		cacheSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_policy_cache_size",
			Help: "Entries in the compiled policy cache.",
		}),
		compiles: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_policy_compilations_total",
			Help: "Policy documents compiled (each cache miss compiles once).",
		}),
		policies: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "verdict_policies",
			Help: "Policies the server holds, by state (ready, invalid: latest version does not compile).",
		}, []string{"state"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "verdict_policy_source_updates_total",
			Help: "Snapshots received from policy sources.",
		}, []string{"source"}),
		resultsQueued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_results_published_total",
			Help: "Evaluations queued for the result sink.",
		}),
		resultsDrop: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_results_dropped_total",
			Help: "Evaluations not queued for the result sink because its buffer was full.",
		}),
		sinkErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "verdict_result_sink_errors_total",
			Help: "Batches the result sink failed to write.",
		}),
	}
	for _, c := range []prometheus.Collector{
		m.grpc, m.policyResults, m.cacheHits, m.cacheMisses, m.cacheEvictions,
		m.cacheSize, m.compiles, m.policies, m.reloads, m.resultsQueued,
		m.resultsDrop, m.sinkErrors,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// countResults adds the results of one evaluation to
// verdict_policy_results_total.
func (m *metrics) countResults(req *eval.Request, groups []policyResults) {
	if len(groups) == 0 {
		return
	}
	kind, namespace := resourceKindNamespace(req)
	op := strings.ToLower(req.Operation)
	if op == "" {
		op = "create"
	}
	cause := "admission_request"
	if req.Mode == eval.Background {
		cause = "background_scan"
	}
	counters := m.requestCounters(requestLabels{kind: kind, namespace: namespace, operation: op, cause: cause})
	for _, g := range groups {
		for _, r := range g.results {
			k := ruleLabels{
				policy: r.Policy, policyNamespace: r.PolicyNamespace, rule: r.Rule,
				status: r.Status, typ: r.Type, enforce: r.Enforce, background: g.policy.Background,
			}
			c, ok := counters.Load(k)
			if !ok {
				c, _ = counters.LoadOrStore(k, m.policyResults.WithLabelValues(resultLabelValues(k, kind, namespace, op, cause)...))
			}
			c.(prometheus.Counter).Inc()
		}
	}
}

// requestLabels are the labels of verdict_policy_results_total that the
// results of one evaluation share; ruleLabels decide the others.
// Counters are cached in two levels (resultCounters), so that a result
// hashes its rule's few labels, not all twelve.
type requestLabels struct {
	kind, namespace, operation, cause string
}

type ruleLabels struct {
	policy, policyNamespace, rule string
	status                        eval.Status
	typ                           eval.RuleType
	enforce, background           bool
}

// requestCounters returns the counters of the results with labels l.
func (m *metrics) requestCounters(l requestLabels) *sync.Map {
	c, ok := m.resultCounters.Load(l)
	if !ok {
		c, _ = m.resultCounters.LoadOrStore(l, new(sync.Map))
	}
	return c.(*sync.Map)
}

// resultLabelValues are the label values of verdict_policy_results_total,
// in the order of its labels.
func resultLabelValues(k ruleLabels, kind, namespace, op, cause string) []string {
	mode, policyType, policyNamespace, background := "audit", "cluster", "-", "true"
	if k.enforce {
		mode = "enforce"
	}
	if k.policyNamespace != "" {
		policyType, policyNamespace = "namespaced", k.policyNamespace
	}
	if !k.background {
		background = "false"
	}
	return []string{
		mode, policyType, background, k.policy, policyNamespace,
		kind, namespace, op, k.rule, string(k.status),
		ruleTypeLabel(k.typ), cause,
	}
}

func ruleTypeLabel(t eval.RuleType) string {
	switch t {
	case eval.RuleMutation:
		return "mutate"
	case eval.RuleGeneration:
		return "generate"
	case eval.RuleImageVerify:
		return "verifyImages"
	default:
		return "validate"
	}
}

// resourceKindNamespace returns the kind and namespace of the request's
// resource, for metrics.
func resourceKindNamespace(req *eval.Request) (kind, namespace string) {
	obj := req.Object
	if len(obj) == 0 {
		obj = req.OldObject
	}
	kind, _ = obj["kind"].(string)
	if req.Kind != "" {
		kind = req.Kind
	}
	namespace = req.Namespace
	if namespace == "" {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			namespace, _ = meta["namespace"].(string)
		}
	}
	return kind, namespace
}

// policyKey is how results name their policy: "name" for a ClusterPolicy,
// "namespace/name" for a Policy (the PolicySelector form).
func policyKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
