package server

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// TestPolicyCounters checks the per-policy counter list under concurrent
// use: one counter per rule labels, whoever adds it first, and lookups
// that see every counter once added.
func TestPolicyCounters(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), Options{}.withDefaults().resultLimits())
	if err != nil {
		t.Fatal(err)
	}
	rq := m.requestCounters(requestLabels{kind: "Pod", namespace: "ns", operation: "create", cause: "admission_request"})
	pc := m.policyCounters(rq, policyLabels{name: "p", background: true})
	keys := []ruleLabels{
		{rule: "a", status: eval.StatusPass, typ: eval.RuleValidation},
		{rule: "a", status: eval.StatusFail, typ: eval.RuleValidation},
		{rule: "a", status: eval.StatusFail, typ: eval.RuleValidation, enforce: true},
		{rule: "b", status: eval.StatusPass, typ: eval.RuleMutation},
	}
	var wg sync.WaitGroup
	got := make([][]prometheus.Counter, 8)
	for g := range got {
		wg.Go(func() {
			for range 100 {
				for _, k := range keys {
					c := pc.lookup(k)
					if c == nil {
						c = m.addCounter(rq, pc, k)
					}
					got[g] = append(got[g], c.counter)
				}
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, c := range got[g] {
			if want := pc.lookup(keys[i%len(keys)]).counter; c != want {
				t.Fatalf("goroutine %d, call %d: counter %p, want %p (the one lookup returns)", g, i, c, want)
			}
		}
	}
	if n := pc.len(); n != len(keys) {
		t.Errorf("len(list) = %d, want %d", n, len(keys))
	}
	if n := m.series.Load(); n != int64(len(keys)) {
		t.Errorf("series = %d, want %d", n, len(keys))
	}
}

// benchGroups returns the results of an evaluation of two policies with
// two rules each, as countResults receives them.
func benchGroups(b testing.TB) []policyResults {
	b.Helper()
	var groups []policyResults
	for _, doc := range []string{teamLabelPolicy, latestTagPolicy} {
		ps, err := compileDocuments("bench", []byte(doc))
		if err != nil {
			b.Fatal(err)
		}
		p := ps[0]
		var rs []*eval.RuleResult
		for _, r := range p.Rules[:2] {
			rs = append(rs, &eval.RuleResult{Policy: p.Name(), Rule: r.Name, Type: eval.RuleValidation, Status: eval.StatusPass})
		}
		groups = append(groups, policyResults{policy: p, results: rs})
	}
	return groups
}

// BenchmarkCountResults measures verdict_policy_results_total on the
// path of every evaluation: the counters exist, four results.
func BenchmarkCountResults(b *testing.B) {
	m, err := newMetrics(prometheus.NewRegistry(), Options{}.withDefaults().resultLimits())
	if err != nil {
		b.Fatal(err)
	}
	groups := benchGroups(b)
	req := &eval.Request{Operation: "CREATE", Namespace: "default", Object: map[string]any{"kind": "Pod"}}
	m.countResults(req, groups, false, time.Millisecond)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.countResults(req, groups, false, time.Millisecond)
		}
	})
}

// resultSeries returns the label sets of the series of
// verdict_policy_results_total in reg, with the value under "value".
func resultSeries(t *testing.T, reg *prometheus.Registry) []map[string]string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != "verdict_policy_results_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			labels["value"] = fmt.Sprint(m.GetCounter().GetValue())
			out = append(out, labels)
		}
	}
	return out
}

// inlineGroup returns the results of an inline policy named name with
// rules named rules.
func inlineGroup(t testing.TB, name string, rules ...string) policyResults {
	t.Helper()
	ps, err := compileDocuments("test", []byte(strings.ReplaceAll(teamLabelPolicy, "require-team-label", name)))
	if err != nil {
		t.Fatal(err)
	}
	g := policyResults{policy: ps[0]}
	for _, r := range rules {
		g.results = append(g.results, &eval.RuleResult{Policy: name, Rule: r, Type: eval.RuleValidation, Status: eval.StatusFail, Enforce: true})
	}
	return g
}

// TestResultSeriesCap sends evaluations whose request-derived labels
// all differ (60,000 namespaces, kinds, inline policy names, rule names)
// and checks that verdict_policy_results_total holds at most the cap plus
// the overflow series, that every result is counted once, and that the
// ones past the cap are counted in verdict_metrics_label_overflow_total.
func TestResultSeriesCap(t *testing.T) {
	server := benchGroups(t) // 2 server policies, 4 results
	inlinePolicies := make([][]policyResults, 150)
	for i := range inlinePolicies {
		inlinePolicies[i] = []policyResults{inlineGroup(t, fmt.Sprintf("inline-%d", i), "check-team")}
	}
	manyRules := make([]string, 2000)
	for i := range manyRules {
		manyRules[i] = fmt.Sprintf("rule-%d", i)
	}
	manyRulesGroup := []policyResults{inlineGroup(t, "many-rules", manyRules...)}
	tests := []struct {
		name      string
		maxSeries int
		n         int // evaluations
		// give returns evaluation i.
		give         func(i int) (*eval.Request, []policyResults, bool)
		wantSeries   int // with labels from requests, then overflow
		wantOverflow int // series
		wantResults  int
	}{
		{
			name:      "60k namespaces",
			maxSeries: 1000,
			n:         60000,
			give: func(i int) (*eval.Request, []policyResults, bool) {
				return &eval.Request{Operation: "CREATE", Namespace: fmt.Sprintf("ns-%d", i), Object: map[string]any{"kind": "Pod"}}, server, false
			},
			wantSeries: 1000, wantOverflow: 4, wantResults: 4 * 60000,
		},
		{
			name:      "60k kinds",
			maxSeries: 1000,
			n:         60000,
			give: func(i int) (*eval.Request, []policyResults, bool) {
				return &eval.Request{Operation: "UPDATE", Namespace: "default", Object: map[string]any{"kind": fmt.Sprintf("Kind%d", i)}}, server, false
			},
			wantSeries: 1000, wantOverflow: 4, wantResults: 4 * 60000,
		},
		{
			name:      "150 inline policy names",
			maxSeries: 100,
			n:         150,
			give: func(i int) (*eval.Request, []policyResults, bool) {
				return &eval.Request{Operation: "CREATE", Namespace: fmt.Sprintf("ns-%d", i), Object: map[string]any{"kind": "Pod"}}, inlinePolicies[i], true
			},
			// Past the cap, one series for every inline policy.
			wantSeries: 100, wantOverflow: 1, wantResults: 150,
		},
		{
			name:      "2000 rules of one inline policy",
			maxSeries: 1000,
			n:         1,
			give: func(int) (*eval.Request, []policyResults, bool) {
				return &eval.Request{Operation: "CREATE", Namespace: "default", Object: map[string]any{"kind": "Pod"}}, manyRulesGroup, true
			},
			wantSeries: maxInlineRuleCounters, wantOverflow: 1, wantResults: 2000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := newMetrics(reg, Options{MetricsMaxSeries: tt.maxSeries}.withDefaults().resultLimits())
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.n {
				req, groups, inline := tt.give(i)
				m.countResults(req, groups, inline, time.Millisecond)
			}
			var series, overflow int
			var results, overflowResults float64
			for _, l := range resultSeries(t, reg) {
				var v float64
				fmt.Sscan(l["value"], &v)
				results += v
				if l["resource_namespace"] != OverflowLabel {
					series++
					continue
				}
				overflow++
				overflowResults += v
				if l["resource_kind"] != OverflowLabel || (l["policy_name"] == OverflowLabel) != strings.Contains(tt.name, "inline") {
					t.Errorf("overflow series %v: want resource_kind %s, and policy_name %[2]s for inline policies only", l, OverflowLabel)
				}
			}
			if series != tt.wantSeries || overflow != tt.wantOverflow {
				t.Errorf("%d evaluations: %d series and %d overflow series, want %d and %d", tt.n, series, overflow, tt.wantSeries, tt.wantOverflow)
			}
			if int(results) != tt.wantResults {
				t.Errorf("%d evaluations: %v results counted, want %d", tt.n, results, tt.wantResults)
			}
			if got := metricValue(t, reg, "verdict_metrics_label_overflow_total"); got != overflowResults {
				t.Errorf("verdict_metrics_label_overflow_total = %v, want %v (the results of the overflow series)", got, overflowResults)
			}
			if got := metricValue(t, reg, "verdict_policy_results_series"); int(got) != tt.wantSeries {
				t.Errorf("verdict_policy_results_series = %v, want %d", got, tt.wantSeries)
			}
			entries := 0
			m.resultCounters.Range(func(any, any) bool { entries++; return true })
			if entries > tt.maxSeries+1 {
				t.Errorf("%d entries in the counter cache, want at most %d", entries, tt.maxSeries+1)
			}
		})
	}
}

// TestResultNamespaces checks Kyverno's namespace include and exclude
// lists: results of resources in other namespaces are not counted, those
// of cluster-scoped resources always are.
func TestResultNamespaces(t *testing.T) {
	groups := benchGroups(t)
	tests := []struct {
		name string
		give NamespaceFilter
		want []string // resource_namespace values counted
	}{
		{"all", NamespaceFilter{}, []string{"", "a", "b", "c"}},
		{"include", NamespaceFilter{Include: []string{"a", "b"}}, []string{"", "a", "b"}},
		{"exclude", NamespaceFilter{Exclude: []string{"a"}}, []string{"", "b", "c"}},
		{"exclude wins", NamespaceFilter{Include: []string{"a", "b"}, Exclude: []string{"a"}}, []string{"", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := newMetrics(reg, Options{MetricsNamespaces: tt.give}.withDefaults().resultLimits())
			if err != nil {
				t.Fatal(err)
			}
			for _, ns := range []string{"", "a", "b", "c", "a"} {
				m.countResults(&eval.Request{Namespace: ns, Object: map[string]any{"kind": "Pod"}}, groups, false, time.Millisecond)
			}
			seen := map[string]bool{}
			for _, l := range resultSeries(t, reg) {
				seen[l["resource_namespace"]] = true
			}
			var got []string
			for ns := range seen {
				got = append(got, ns)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("countResults with %+v: resource_namespace values (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

// TestPolicyResultMetricOverflow checks the cap through the server: an
// inline policy's results in a second namespace, past a cap of one
// series, are counted under the overflow labels, policy and rule names
// included.
func TestPolicyResultMetricOverflow(t *testing.T) {
	ts := startServer(t, Options{MetricsMaxSeries: 1})
	c := ts.client(t)
	for _, ns := range []string{"ns1", "ns2", "ns3"} {
		_, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
			Object:   pod(t, "p", ns, "nginx", nil),
			Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(teamLabelPolicy)}}},
		})
		if err != nil {
			t.Fatalf("Evaluate(Pod in %s): %v", ns, err)
		}
	}
	got := map[string]string{}
	for _, l := range resultSeries(t, ts.reg) {
		got[l["resource_namespace"]+" "+l["resource_kind"]+" "+l["policy_name"]+" "+l["rule_name"]] = l["value"]
	}
	want := map[string]string{
		"ns1 Pod require-team-label check-team":   "1",
		"_overflow _overflow _overflow _overflow": "2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdict_policy_results_total series (-want +got):\n%s", diff)
	}
	if got := metricValue(t, ts.reg, "verdict_metrics_label_overflow_total"); got != 2 {
		t.Errorf("verdict_metrics_label_overflow_total = %v, want 2", got)
	}
}
