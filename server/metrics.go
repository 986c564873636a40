package server

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/internal/promreg"
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
	// limits bound the series and cache entries that requests add;
	// series and requestEntries count them.
	limits         resultLimits
	series         atomic.Int64
	requestEntries atomic.Int64
	labelOverflow  prometheus.Counter

	cacheHits      prometheus.Counter
	cacheMisses    prometheus.Counter
	cacheEvictions prometheus.Counter
	cacheSize      prometheus.Gauge
	// inlineCacheBytes is the memory of the inline policies cached.
	inlineCacheBytes prometheus.Gauge
	compiles         prometheus.Counter

	policies      *prometheus.GaugeVec
	sourceErrors  prometheus.Gauge
	reloads       *prometheus.CounterVec
	resultsQueued prometheus.Counter
	resultsDrop   prometheus.Counter

	// kyverno are Kyverno's own metrics (kyverno_metrics.go).
	kyverno kyvernoMetrics
}

func newMetrics(reg prometheus.Registerer, limits resultLimits) (*metrics, error) {
	b := promreg.New(reg)
	m := &metrics{
		limits: limits,
		grpc: promreg.Register(b, grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}),
		))),
		policyResults:    b.CounterVec("verdict_policy_results_total", "Rule results, labelled as Kyverno's kyverno_policy_results.", "policy_validation_mode", "policy_type", "policy_background_mode", "policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "rule_name", "rule_result", "rule_type", "rule_execution_cause"),
		labelOverflow:    b.Counter("verdict_metrics_label_overflow_total", "Rule results counted in verdict_policy_results_total with resource_kind, resource_namespace (and the policy and rule names of inline policies) set to \""+OverflowLabel+"\", because the cap on series with labels from requests (--metrics-max-series) was reached."),
		cacheHits:        b.Counter("verdict_policy_cache_hits_total", "Lookups of compiled policies found in the cache."),
		cacheMisses:      b.Counter("verdict_policy_cache_misses_total", "Lookups of compiled policies not found in the cache."),
		cacheEvictions:   b.Counter("verdict_policy_cache_evictions_total", "Compiled policies evicted from the cache."),
		cacheSize:        b.Gauge("verdict_policy_cache_size", "Entries in the compiled policy cache."),
		inlineCacheBytes: b.Gauge("verdict_inline_policy_cache_bytes", "Memory held by the compiled inline policies in the cache (bounded by --inline-cache-bytes)."),
		compiles:         b.Counter("verdict_policy_compilations_total", "Policy documents compiled (each cache miss compiles once)."),
		policies:         b.GaugeVec("verdict_policies", "Policies the server holds, by state (ready, invalid: latest version does not compile).", "state"),
		sourceErrors:     b.Gauge("verdict_policy_source_errors", "Files or other origins of the policy sources that the server could not read or use (duplicates, documents that do not decode), as listed by ListPolicies; the policies they held before stay in use."),
		reloads:          b.CounterVec("verdict_policy_source_updates_total", "Snapshots received from policy sources.", "source"),
		resultsQueued:    b.Counter("verdict_results_published_total", "Evaluations queued for the report writer."),
		resultsDrop:      b.Counter("verdict_results_dropped_total", "Evaluations dropped because the queue to the report writer was full."),
	}
	m.kyverno = newKyvernoMetrics(b)
	b.GaugeFunc("verdict_policy_results_series", "Series of verdict_policy_results_total with labels from requests, counted against --metrics-max-series (overflow series not included).",
		func() float64 { return float64(m.series.Load()) })
	return m, b.Err()
}

// OverflowLabel is the value that replaces the labels of
// verdict_policy_results_total that come from requests once
// Options.MetricsMaxSeries is reached (see resultLimits). No Kubernetes
// namespace, kind or policy name can hold an underscore, so it never names
// a real one.
const OverflowLabel = "_overflow"

// maxInlineRuleCounters bounds the counters of one inline policy for one
// set of request labels (its rules times the results they had); more
// collapse into rule_name OverflowLabel. A server policy's counters are
// bounded by its rules.
const maxInlineRuleCounters = 256

// resultLimits bound what requests can add to verdict_policy_results_total:
// its labels resource_kind and resource_namespace come from the request,
// and so do policy_name, policy_namespace and rule_name for inline
// policies. The other labels take a few values each, or name the server's
// own policies and rules.
//
// At most maxSeries series have labels from requests; so do at most
// maxSeries entries of the counter cache (requestLabels). Past the cap, a
// result that would start a new series is counted in the series whose
// request-derived labels are OverflowLabel, and in
// verdict_metrics_label_overflow_total. Those overflow series take the
// labels of the server's policies and rules, which the operator controls,
// so they are bounded too. The cap is checked only when a counter is
// made: the path of a result whose counter exists does not change.
//
// namespaces (Options.MetricsNamespaces) selects the resource namespaces
// counted at all.
type resultLimits struct {
	maxSeries  int64
	namespaces promreg.Namespaces
	// noKyverno: Kyverno's result metrics are not exported
	// (Options.NoKyvernoResultMetrics).
	noKyverno bool
}

// countResults adds the results of one evaluation to
// verdict_policy_results_total and Kyverno's result metrics. inline says
// that the policies came with the request; elapsed is the engine's time,
// shared equally by the results in Kyverno's duration histograms.
func (m *metrics) countResults(req *eval.Request, groups []policyResults, inline bool, elapsed time.Duration) {
	if len(groups) == 0 {
		return
	}
	n := 0
	for _, g := range groups {
		n += len(g.results)
	}
	each := share(elapsed, n)
	kind, namespace := resourceKindNamespace(req)
	cause := "admission_request"
	if req.Mode == eval.Background {
		cause = "background_scan"
	}
	rq := m.requestCounters(requestLabels{kind: kind, namespace: namespace, operation: operationLabel(req.Operation), cause: cause, dryRun: req.DryRun})
	if rq == nil {
		return // a namespace the metrics leave out
	}
	for _, g := range groups {
		pc := m.policyCounters(rq, policyLabels{
			name: g.policy.Name(), namespace: g.policy.Namespace(), background: g.policy.Background, inline: inline,
			family: policyFamily(g.policy), enforce: policyEnforce(g.policy),
		})
		for _, r := range g.results {
			k := ruleLabels{rule: r.Rule, status: r.Status, typ: r.Type, enforce: r.Enforce}
			c := pc.lookup(k)
			if c == nil {
				c = m.addCounter(rq, pc, k)
			}
			c.counter.Inc()
			if c.kyverno != nil {
				c.kyverno.Inc()
				c.duration.Observe(each)
			}
			if c.overflow {
				m.labelOverflow.Inc()
			}
		}
	}
}

// operationLabel is the resource_request_operation label of an engine
// operation.
func operationLabel(op string) string {
	switch op {
	case "", "CREATE":
		return "create"
	case "UPDATE":
		return "update"
	case "DELETE":
		return "delete"
	case "CONNECT":
		return "connect"
	}
	return strings.ToLower(op)
}

// The counters of verdict_policy_results_total are cached in three levels
// (resultCounters): by the labels that the results of one evaluation share
// (requestLabels), then by policy (policyLabels), then by rule
// (ruleLabels, a short list searched in order), so that a result costs a
// few comparisons instead of hashing all twelve labels.
type requestLabels struct {
	kind, namespace, operation, cause string
	// dryRun is a label of kyverno_policy_results_total only.
	dryRun bool
}

type policyLabels struct {
	name, namespace string
	background      bool
	// inline policies came with a request: their names are bounded like
	// the request's labels. A server policy and an inline policy of the
	// same name have separate counters of the same series.
	inline bool
	// family and enforce (the policy's validation mode) are labels of
	// Kyverno's metrics only.
	family  family
	enforce bool
}

type ruleLabels struct {
	rule    string
	status  eval.Status
	typ     eval.RuleType
	enforce bool
}

// requestCounters holds the counters of one requestLabels, by policy.
type requestCounters struct {
	labels requestLabels
	// overflow: kind and namespace are OverflowLabel (the series cap was
	// reached).
	overflow bool
	// policies holds the policyCounters by policy (countersKey ->
	// *policyList): the name of a cluster-wide policy is a string key,
	// which hashes on sync.Map's fast path, where the whole policyLabels
	// struct would be hashed field by field through its type descriptor
	// for each policy of each evaluation.
	policies sync.Map
}

// policyList holds the policyCounters of one policy (countersKey): a list
// that only grows, read without a lock, with one entry per set of the
// other policy labels (server or inline, background, validation mode):
// one or two.
type policyList struct {
	mu   sync.Mutex // serialises add
	list atomic.Pointer[[]*policyCounters]
}

// lookup returns the counters of l, nil when there are none yet.
func (pl *policyList) lookup(l policyLabels) *policyCounters {
	if list := pl.list.Load(); list != nil {
		for _, pc := range *list {
			if pc.labels == l {
				return pc
			}
		}
	}
	return nil
}

// loadOrAdd returns the counters of pc.labels, adding pc unless another
// call added counters for them first.
func (pl *policyList) loadOrAdd(pc *policyCounters) *policyCounters {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if c := pl.lookup(pc.labels); c != nil {
		return c
	}
	var list []*policyCounters
	if l := pl.list.Load(); l != nil {
		list = slices.Clip(*l) // readers keep the old list; append copies
	}
	list = append(list, pc)
	pl.list.Store(&list)
	return pc
}

// policyCounters holds the counters of one policy's rules: a list that
// only grows, read without a lock (a few rules times the statuses they
// had).
type policyCounters struct {
	labels policyLabels
	// overflow: an inline policy whose name and namespace are
	// OverflowLabel.
	overflow bool
	mu       sync.Mutex // serialises add
	list     atomic.Pointer[[]ruleCounter]
}

type ruleCounter struct {
	labels  ruleLabels
	counter prometheus.Counter
	// kyverno and duration are the series of Kyverno's metrics with the
	// same labels (nil for a policy they do not count).
	kyverno  prometheus.Counter
	duration prometheus.Observer
	// overflow: the series has OverflowLabel for the request's labels.
	overflow bool
}

// lookup returns the counter of k, nil when there is none yet.
func (pc *policyCounters) lookup(k ruleLabels) *ruleCounter {
	if l := pc.list.Load(); l != nil {
		for i := range *l {
			if (*l)[i].labels == k {
				return &(*l)[i]
			}
		}
	}
	return nil
}

// add appends a counter for k; the caller holds pc.mu and checked that k
// has none.
func (pc *policyCounters) add(c ruleCounter) *ruleCounter {
	var list []ruleCounter
	if l := pc.list.Load(); l != nil {
		list = slices.Clip(*l) // readers keep the old list; append copies
	}
	list = append(list, c)
	pc.list.Store(&list)
	return &list[len(list)-1]
}

func (pc *policyCounters) len() int {
	if l := pc.list.Load(); l != nil {
		return len(*l)
	}
	return 0
}

// requestCounters returns the counters of the results with labels l, nil
// for a namespace the metrics leave out.
func (m *metrics) requestCounters(l requestLabels) *requestCounters {
	if c, ok := m.resultCounters.Load(l); ok {
		return c.(*requestCounters)
	}
	if !m.limits.namespaces.Counted(l.namespace) {
		return nil
	}
	rq := &requestCounters{labels: l}
	if m.reserve(&m.requestEntries) {
		// The request's strings may share its buffer: keep copies.
		rq.labels.kind, rq.labels.namespace = strings.Clone(l.kind), strings.Clone(l.namespace)
		c, loaded := m.resultCounters.LoadOrStore(rq.labels, rq)
		if loaded {
			m.requestEntries.Add(-1)
		}
		return c.(*requestCounters)
	}
	rq.labels.kind, rq.labels.namespace, rq.overflow = OverflowLabel, OverflowLabel, true
	c, _ := m.resultCounters.LoadOrStore(rq.labels, rq)
	return c.(*requestCounters)
}

// reserve takes one of the maxSeries places counted by n, if one is left.
func (m *metrics) reserve(n *atomic.Int64) bool {
	for {
		v := n.Load()
		if v >= m.limits.maxSeries {
			return false
		}
		if n.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// policyCounters returns the counters of policy l under rq. Inline
// policies seen once the series cap is reached share one entry named
// OverflowLabel.
func (m *metrics) policyCounters(rq *requestCounters, l policyLabels) *policyCounters {
	if pl, ok := rq.policies.Load(countersKey(l)); ok {
		if c := pl.(*policyList).lookup(l); c != nil {
			return c
		}
	}
	pc := &policyCounters{labels: l}
	if l.inline && (rq.overflow || m.series.Load() >= m.limits.maxSeries) {
		pc.labels.name, pc.overflow = OverflowLabel, true
		if l.namespace != "" {
			pc.labels.namespace = OverflowLabel
		}
	} else {
		// Names may share the buffer of a request or a policy document:
		// keep copies.
		pc.labels.name, pc.labels.namespace = strings.Clone(l.name), strings.Clone(l.namespace)
	}
	key := countersKey(pc.labels)
	pl, ok := rq.policies.Load(key)
	if !ok {
		pl, _ = rq.policies.LoadOrStore(key, &policyList{})
	}
	return pl.(*policyList).loadOrAdd(pc)
}

// namespacedPolicy is the key of a namespaced policy's counters in
// requestCounters.policies.
type namespacedPolicy struct{ namespace, name string }

// countersKey is the key of l's counters in requestCounters.policies: the
// name of a cluster-wide policy, the namespace and name of a namespaced
// one.
func countersKey(l policyLabels) any {
	if l.namespace == "" {
		return l.name
	}
	return namespacedPolicy{l.namespace, l.name}
}

// addCounter returns the counter of k under rq and pc, made unless another
// call made it first. The series gets the labels of the request and the
// policy while the series cap allows; otherwise it is the overflow series
// of the policy's rule (for an inline policy: of every inline policy).
func (m *metrics) addCounter(rq *requestCounters, pc *policyCounters, k ruleLabels) *ruleCounter {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if c := pc.lookup(k); c != nil {
		return c
	}
	collapse := rq.overflow || pc.overflow || (pc.labels.inline && pc.len() >= maxInlineRuleCounters)
	if !collapse && m.reserve(&m.series) {
		k.rule = strings.Clone(k.rule)
		c := ruleCounter{labels: k, counter: m.policyResults.WithLabelValues(resultLabelValues(rq.labels, pc.labels, k)...)}
		if !m.limits.noKyverno {
			c.kyverno, c.duration = m.kyverno.series(rq.labels, pc.labels, k)
		}
		return pc.add(c)
	}
	rl, pl := rq.labels, pc.labels
	rl.kind, rl.namespace = OverflowLabel, OverflowLabel
	if pl.inline {
		pl.name = OverflowLabel
		if pl.namespace != "" {
			pl.namespace = OverflowLabel
		}
		// Kept under the overflow rule name, so that the list stays short.
		k.rule = OverflowLabel
		if c := pc.lookup(k); c != nil {
			return c
		}
	}
	k.rule = strings.Clone(k.rule)
	c := ruleCounter{labels: k, counter: m.policyResults.WithLabelValues(resultLabelValues(rl, pl, k)...), overflow: true}
	if !m.limits.noKyverno {
		c.kyverno, c.duration = m.kyverno.series(rl, pl, k)
	}
	return pc.add(c)
}

// resultLabelValues are the label values of verdict_policy_results_total,
// in the order of its labels.
func resultLabelValues(r requestLabels, p policyLabels, k ruleLabels) []string {
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
		r.kind, r.namespace, r.operation, k.rule, string(k.status),
		verdictRuleTypes.label(k.typ), r.cause,
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
