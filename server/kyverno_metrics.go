package server

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/promreg"
)

// kyvernoMetrics are the metrics of Kyverno's admission controller and
// background controller that the decision server has the data of
// (pkg/metrics of Kyverno 1.19: policy_engine.go, vpol.go, mpol.go,
// gpol.go, ivpol.go, policy_rule.go, policychanges), with Kyverno's names,
// labels, label values and buckets, as a Prometheus scrape of Kyverno
// shows them (promreg.KyvernoScope). Their series with labels from
// requests share the cap and the namespace filter of
// verdict_policy_results_total: a result counted there under
// OverflowLabel is counted here under OverflowLabel too.
type kyvernoMetrics struct {
	// results and duration: the rules of ClusterPolicies and Policies.
	results  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// By family of policies.kyverno.io kinds: one result per policy.
	celResults  [numFamilies]*prometheus.CounterVec
	celDuration [numFamilies]*prometheus.HistogramVec
	changes     *prometheus.CounterVec
	ruleInfo    *prometheus.Desc
}

// family is what a policy's results are counted as in Kyverno's metrics.
type family uint8

const (
	// familyNone: no metric of Kyverno counts the results
	// (ValidatingAdmissionPolicies and MutatingAdmissionPolicies, which
	// the API server evaluates in a Kyverno cluster, and
	// DeletingPolicies).
	familyNone family = iota
	familyKyverno
	familyValidating
	familyMutating
	familyGenerating
	familyImageValidating
	numFamilies
)

func policyFamily(p *policy.Policy) family {
	switch {
	case p.Validating != nil:
		return familyValidating
	case p.Mutating != nil:
		return familyMutating
	case p.Generating != nil:
		return familyGenerating
	case p.ImageValidating != nil:
		return familyImageValidating
	case p.VAP != nil || p.MutatingAdmission != nil || p.Deleting != nil:
		return familyNone
	}
	return familyKyverno
}

// policyEnforce is Kyverno's policy_validation_mode of a policy: for a
// ClusterPolicy or Policy, spec.HasValidateEnforce (the policy's action or
// any rule's failureAction is Enforce); for the policies.kyverno.io
// kinds, Deny among spec.validationActions (the engine's Action).
func policyEnforce(p *policy.Policy) bool {
	if p.Action == policy.Enforce {
		return true
	}
	for _, r := range p.Rules {
		if r.Action == policy.Enforce {
			return true
		}
	}
	return false
}

// celLabels are the labels of kyverno_<kind>_policy_results_total and
// kyverno_<kind>_policy_execution_duration_seconds, by family.
var celLabels = [numFamilies][]string{
	familyValidating:      {"policy_validation_mode", "policy_background_mode", "policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "execution_cause", "result"},
	familyImageValidating: {"policy_validation_mode", "policy_background_mode", "policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "execution_cause", "result"},
	familyMutating:        {"policy_background_mode", "policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "execution_cause", "result"},
	familyGenerating:      {"policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "execution_cause", "result"},
}

var celNames = [numFamilies]string{
	familyValidating:      "validating",
	familyImageValidating: "image_validating",
	familyMutating:        "mutating",
	familyGenerating:      "generating",
}

// kyvernoResultLabels are the labels of kyverno_policy_results_total and
// kyverno_policy_execution_duration_seconds.
var kyvernoResultLabels = []string{"policy_validation_mode", "policy_type", "policy_background_mode", "policy_name", "policy_namespace", "resource_kind", "resource_namespace", "resource_request_operation", "rule_name", "rule_result", "rule_type", "rule_execution_cause", "dry_run"}

var policyInfoLabels = []string{"policy_validation_mode", "policy_type", "policy_background_mode", "policy_name", "policy_namespace"}

func newKyvernoMetrics(b *promreg.Builder) kyvernoMetrics {
	k := b.Kyverno()
	m := kyvernoMetrics{
		results:  k.CounterVec("kyverno_policy_results_total", "Rule results of ClusterPolicies and Policies, as Kyverno's kyverno_policy_results.", kyvernoResultLabels...),
		duration: k.HistogramVec("kyverno_policy_execution_duration_seconds", "Engine time of the rule results of ClusterPolicies and Policies, as Kyverno's kyverno_policy_execution_duration_seconds: the engine does not time each rule, so each result of an evaluation gets an equal share of the evaluation's time.", kyvernoResultLabels...),
		changes:  k.CounterVec("kyverno_policy_changes_total", "ClusterPolicies and Policies created, updated and deleted in the server's policy sources, as Kyverno's kyverno_policy_changes.", append(policyInfoLabels, "policy_change_type")...),
		ruleInfo: k.Desc("kyverno_policy_rule_info_total", "1 for each rule of the ClusterPolicies and Policies the server holds, as Kyverno's kyverno_policy_rule_info_total.", append(policyInfoLabels, "rule_name", "rule_type", "status_ready")...),
	}
	for f := familyValidating; f < numFamilies; f++ {
		m.celResults[f] = k.CounterVec("kyverno_"+celNames[f]+"_policy_results_total", "Results of the "+celNames[f]+" policies (policies.kyverno.io), as Kyverno's kyverno_"+celNames[f]+"_policy_results.", celLabels[f]...)
		m.celDuration[f] = k.HistogramVec("kyverno_"+celNames[f]+"_policy_execution_duration_seconds", "Engine time of the results of the "+celNames[f]+" policies, an equal share of their evaluation's time each, as Kyverno's kyverno_"+celNames[f]+"_policy_execution_duration_seconds.", celLabels[f]...)
	}
	return m
}

// series returns the counter and the histogram of Kyverno's metrics for a
// result with these labels (as addCounter settled them), nil for a policy
// no metric of Kyverno counts.
func (k *kyvernoMetrics) series(r requestLabels, p policyLabels, rule ruleLabels) (prometheus.Counter, prometheus.Observer) {
	background := boolLabel(p.background)
	op := r.operation
	switch p.family {
	case familyKyverno:
		mode, policyType, policyNamespace := "audit", "cluster", "-"
		if p.enforce {
			mode = "enforce"
		}
		if p.namespace != "" {
			policyType, policyNamespace = "namespaced", p.namespace
		}
		v := []string{mode, policyType, background, p.name, policyNamespace,
			r.kind, r.namespace, op, rule.rule, string(rule.status),
			kyvernoRuleTypes.label(rule.typ), r.cause, boolLabel(r.dryRun)}
		return k.results.WithLabelValues(v...), k.duration.WithLabelValues(v...)
	case familyValidating, familyImageValidating, familyMutating, familyGenerating:
	default:
		return nil, nil
	}
	var v []string
	switch p.family {
	case familyValidating, familyImageValidating:
		mode := "Audit"
		if p.enforce {
			mode = "Deny"
		}
		v = []string{mode, background}
	case familyMutating:
		v = []string{background}
	}
	cause := r.cause
	if p.family == familyGenerating {
		// Kyverno's generating metrics always say background_scan
		// (pkg/metrics/gpol.go).
		cause = "background_scan"
	}
	v = append(v, p.name, p.namespace, r.kind, r.namespace, op, cause, string(rule.status))
	return k.celResults[p.family].WithLabelValues(v...), k.celDuration[p.family].WithLabelValues(v...)
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ruleTypeLabels names the rule types in the rule_type label of one
// metric family: mutate, generate and validate in every family; the
// name of image verification and of any other type differ.
type ruleTypeLabels struct{ imageVerify, other string }

var (
	// kyvernoRuleTypes are Kyverno's names
	// (ParseRuleTypeFromEngineRuleResponse; "-" is its EmptyRuleType).
	kyvernoRuleTypes = ruleTypeLabels{imageVerify: "imageVerify", other: "-"}
	// verdictRuleTypes are the names of Verdict's own metrics
	// (verdict_policy_results_total).
	verdictRuleTypes = ruleTypeLabels{imageVerify: "verifyImages", other: "validate"}
)

// label is the rule_type label of t.
func (l ruleTypeLabels) label(t eval.RuleType) string {
	switch t {
	case eval.RuleMutation:
		return "mutate"
	case eval.RuleGeneration:
		return "generate"
	case eval.RuleImageVerify:
		return l.imageVerify
	case eval.RuleValidation:
		return "validate"
	}
	return l.other
}

// share is the time each of n results of one evaluation is given.
func share(elapsed time.Duration, n int) float64 {
	if n <= 0 {
		return 0
	}
	return elapsed.Seconds() / float64(n)
}

// policyInfo is what Kyverno's policy metrics say of a ClusterPolicy or
// Policy, in the order of policyInfoLabels.
func policyInfo(p *policy.Policy) []string {
	mode, policyType, namespace := "audit", "cluster", "-"
	if policyEnforce(p) {
		mode = "enforce"
	}
	if p.Namespace() != "" {
		policyType, namespace = "namespaced", p.Namespace()
	}
	return []string{mode, policyType, boolLabel(p.Background), p.Name(), namespace}
}

// changed counts the changes from the ClusterPolicies and Policies of old
// to those of cur in kyverno_policy_changes_total, as Kyverno's policy
// metrics controller does (created, updated: with the old version's
// labels, and the new one's when they differ; deleted).
func (k *kyvernoMetrics) changed(old, cur *policySet, counted func(namespace string) bool) {
	prev := map[string]*policy.Policy{}
	if old != nil {
		for _, e := range old.entries {
			if e.policy != nil && policyFamily(e.policy) == familyKyverno {
				prev[e.identity()] = e.policy
			}
		}
	}
	count := func(p *policy.Policy, change string) {
		if counted(p.Namespace()) {
			k.changes.WithLabelValues(append(policyInfo(p), change)...).Inc()
		}
	}
	for _, e := range cur.entries {
		p := e.policy
		if p == nil || policyFamily(p) != familyKyverno {
			continue
		}
		id := e.identity()
		was, ok := prev[id]
		delete(prev, id)
		switch {
		case !ok:
			count(p, "created")
		case was.Hash() != p.Hash():
			count(was, "updated")
			if !slices.Equal(policyInfo(was), policyInfo(p)) {
				count(p, "updated")
			}
		}
	}
	for _, p := range prev {
		count(p, "deleted")
	}
}

// ruleInfoCollector reports kyverno_policy_rule_info_total at each scrape
// from the store's current policy set: its series are the rules of the
// server's own ClusterPolicies and Policies, which the operator controls.
type ruleInfoCollector struct {
	desc    *prometheus.Desc
	store   func() *policySet
	counted func(namespace string) bool
}

func (c ruleInfoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c ruleInfoCollector) Collect(ch chan<- prometheus.Metric) {
	set := c.store()
	if set == nil {
		return
	}
	for _, e := range set.entries {
		p := e.policy
		if p == nil || policyFamily(p) != familyKyverno || !c.counted(p.Namespace()) {
			continue
		}
		info := policyInfo(p)
		ready := boolLabel(len(e.errs) == 0)
		for _, r := range p.Rules {
			// Kyverno's ParseRuleType of a rule names its type as its
			// results do (policy.RuleType's String is eval's RuleType).
			m, err := prometheus.NewConstMetric(c.desc, prometheus.GaugeValue, 1, append(info, r.Name, kyvernoRuleTypes.label(eval.RuleType(r.Type.String())), ready)...)
			if err != nil {
				m = prometheus.NewInvalidMetric(c.desc, err)
			}
			ch <- m
		}
	}
}
