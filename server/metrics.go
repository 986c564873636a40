package server

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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
	// requestLabels -> *requestCounters (see countResults).
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
		pc := counters.policy(policyLabels{name: g.policy.Name(), namespace: g.policy.Namespace(), background: g.policy.Background})
		for _, r := range g.results {
			k := ruleLabels{rule: r.Rule, status: r.Status, typ: r.Type, enforce: r.Enforce}
			c := pc.lookup(k)
			if c == nil {
				c = pc.add(k, func() prometheus.Counter {
					return m.policyResults.WithLabelValues(resultLabelValues(pc.labels, k, kind, namespace, op, cause)...)
				})
			}
			c.Inc()
		}
	}
}

// The counters of verdict_policy_results_total are cached in three levels
// (resultCounters): by the labels that the results of one evaluation share
// (requestLabels), then by policy (policyLabels), then by rule
// (ruleLabels, a short list searched in order), so that a result costs a
// few comparisons instead of hashing all twelve labels.
type requestLabels struct {
	kind, namespace, operation, cause string
}

type policyLabels struct {
	name, namespace string
	background      bool
}

type ruleLabels struct {
	rule    string
	status  eval.Status
	typ     eval.RuleType
	enforce bool
}

// requestCounters holds the counters of one requestLabels, by policy.
type requestCounters struct {
	policies sync.Map // policyLabels -> *policyCounters
}

func (rc *requestCounters) policy(l policyLabels) *policyCounters {
	c, ok := rc.policies.Load(l)
	if !ok {
		c, _ = rc.policies.LoadOrStore(l, &policyCounters{labels: l})
	}
	return c.(*policyCounters)
}

// policyCounters holds the counters of one policy's rules: a list that
// only grows, read without a lock (a few rules times the statuses they
// had).
type policyCounters struct {
	labels policyLabels
	mu     sync.Mutex // serialises add
	list   atomic.Pointer[[]ruleCounter]
}

type ruleCounter struct {
	labels  ruleLabels
	counter prometheus.Counter
}

// lookup returns the counter of k, nil when there is none yet.
func (pc *policyCounters) lookup(k ruleLabels) prometheus.Counter {
	if l := pc.list.Load(); l != nil {
		for i := range *l {
			if (*l)[i].labels == k {
				return (*l)[i].counter
			}
		}
	}
	return nil
}

// add returns the counter of k, made by newCounter unless another call
// added it first.
func (pc *policyCounters) add(k ruleLabels, newCounter func() prometheus.Counter) prometheus.Counter {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if c := pc.lookup(k); c != nil {
		return c
	}
	var list []ruleCounter
	if l := pc.list.Load(); l != nil {
		list = slices.Clip(*l) // readers keep the old list; append copies
	}
	c := newCounter()
	list = append(list, ruleCounter{labels: k, counter: c})
	pc.list.Store(&list)
	return c
}

// requestCounters returns the counters of the results with labels l.
func (m *metrics) requestCounters(l requestLabels) *requestCounters {
	c, ok := m.resultCounters.Load(l)
	if !ok {
		c, _ = m.resultCounters.LoadOrStore(l, new(requestCounters))
	}
	return c.(*requestCounters)
}

// resultLabelValues are the label values of verdict_policy_results_total,
// in the order of its labels.
func resultLabelValues(p policyLabels, k ruleLabels, kind, namespace, op, cause string) []string {
	mode, policyType, policyNamespace, background := "audit", "cluster", "-", "true"
	if k.enforce {
		mode = "enforce"
	}
	if p.namespace != "" {
		policyType, policyNamespace = "namespaced", p.namespace
	}
	if !p.background {
		background = "false"
	}
	return []string{
		mode, policyType, background, p.name, policyNamespace,
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
