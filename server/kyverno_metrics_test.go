package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
)

// series returns the series of the metric name in reg, as label maps
// with the sample value under "value" (the count, for a histogram).
func series(t *testing.T, reg *prometheus.Registry, name string) []map[string]string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				labels["value"] = fmt.Sprint(m.GetCounter().GetValue())
			case m.GetHistogram() != nil:
				labels["value"] = fmt.Sprint(m.GetHistogram().GetSampleCount())
			case m.GetGauge() != nil:
				labels["value"] = fmt.Sprint(m.GetGauge().GetValue())
			}
			out = append(out, labels)
		}
	}
	slices.SortFunc(out, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// scope are the labels the OpenTelemetry exporter adds to each of
// Kyverno's series.
func withScope(m map[string]string) map[string]string {
	m["otel_scope_name"], m["otel_scope_version"], m["otel_scope_schema_url"] = "kyverno", "", ""
	return m
}

// TestKyvernoPolicyResults checks the series of kyverno_policy_results_total
// and kyverno_policy_execution_duration_seconds against the labels
// Kyverno's RecordResponse gives (pkg/metrics/policy_engine.go): the
// policy's validation mode (enforce when its action is Enforce), "-" for
// the namespace of a ClusterPolicy, lower-case operation and result,
// dry_run.
func TestKyvernoPolicyResults(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, Options{}.withDefaults().resultLimits())
	if err != nil {
		t.Fatal(err)
	}
	groups := benchGroups(t) // require-team-label (Enforce), disallow-latest-tag (Audit): two passing rules each
	m.countResults(&eval.Request{Operation: "CREATE", Namespace: "ns", DryRun: true, Object: map[string]any{"kind": "Pod"}}, groups, false, 4*time.Millisecond)
	m.countResults(&eval.Request{Mode: eval.Background, Namespace: "ns", Object: map[string]any{"kind": "Pod"}}, groups, false, 4*time.Millisecond)

	var want []map[string]string
	for _, g := range groups {
		mode := "audit"
		if g.policy.Name() == "require-team-label" {
			mode = "enforce"
		}
		for _, r := range g.results {
			for _, c := range []struct{ cause, dryRun string }{{"admission_request", "true"}, {"background_scan", "false"}} {
				want = append(want, withScope(map[string]string{
					"policy_validation_mode": mode, "policy_type": "cluster", "policy_background_mode": "true",
					"policy_name": g.policy.Name(), "policy_namespace": "-", "resource_kind": "Pod", "resource_namespace": "ns",
					"resource_request_operation": "create", "rule_name": r.Rule, "rule_result": "pass", "rule_type": "validate",
					"rule_execution_cause": c.cause, "dry_run": c.dryRun, "value": "1",
				}))
			}
		}
	}
	slices.SortFunc(want, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, name := range []string{"kyverno_policy_results_total", "kyverno_policy_execution_duration_seconds"} {
		if diff := cmp.Diff(want, series(t, reg, name)); diff != "" {
			t.Errorf("countResults: %s (-want +got):\n%s", name, diff)
		}
	}
}

// TestNoKyvernoResultMetrics checks Options.NoKyvernoResultMetrics:
// verdict_policy_results_total counts, Kyverno's result metrics have no
// series.
func TestNoKyvernoResultMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, Options{NoKyvernoResultMetrics: true}.withDefaults().resultLimits())
	if err != nil {
		t.Fatal(err)
	}
	m.countResults(&eval.Request{Operation: "CREATE", Namespace: "ns", Object: map[string]any{"kind": "Pod"}}, benchGroups(t), false, time.Millisecond)
	if n := len(resultSeries(t, reg)); n != 4 {
		t.Errorf("verdict_policy_results_total: %d series, want 4", n)
	}
	for _, name := range []string{"kyverno_policy_results_total", "kyverno_policy_execution_duration_seconds"} {
		if got := series(t, reg, name); len(got) != 0 {
			t.Errorf("%s = %v, want no series", name, got)
		}
	}
}

// TestKyvernoPolicyChanges checks kyverno_policy_changes_total as
// Kyverno's policy metrics controller counts (pkg/metrics/policychanges):
// created, updated (a new hash), deleted; a reload that changes nothing
// counts nothing.
func TestKyvernoPolicyChanges(t *testing.T) {
	compile := func(doc string) *policy.Policy {
		t.Helper()
		ps, err := compileDocuments("test", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return ps[0]
	}
	team := compile(teamLabelPolicy)
	team2 := compile(strings.Replace(teamLabelPolicy, "validationFailureAction: Enforce", "validationFailureAction: Audit", 1))
	latest := compile(latestTagPolicy)
	set := func(ps ...*policy.Policy) *policySet {
		s := &policySet{}
		for _, p := range ps {
			s.entries = append(s.entries, &entry{kind: p.Kind(), name: p.Name(), namespace: p.Namespace(), policy: p})
		}
		return s
	}
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, Options{}.withDefaults().resultLimits())
	if err != nil {
		t.Fatal(err)
	}
	steps := []*policySet{set(), set(team, latest), set(team, latest), set(team2, latest), set(team2)}
	for i := 1; i < len(steps); i++ {
		m.kyverno.changed(steps[i-1], steps[i], m.limits.namespaces.Counted)
	}
	change := func(name, mode, typ, value string) map[string]string {
		return withScope(map[string]string{"policy_validation_mode": mode, "policy_type": "cluster", "policy_background_mode": "true",
			"policy_name": name, "policy_namespace": "-", "policy_change_type": typ, "value": value})
	}
	want := []map[string]string{
		change("disallow-latest-tag", "audit", "created", "1"),
		change("disallow-latest-tag", "audit", "deleted", "1"),
		change("require-team-label", "audit", "updated", "1"),
		change("require-team-label", "enforce", "created", "1"),
		change("require-team-label", "enforce", "updated", "1"),
	}
	slices.SortFunc(want, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	if diff := cmp.Diff(want, series(t, reg, "kyverno_policy_changes_total")); diff != "" {
		t.Errorf("changed: kyverno_policy_changes_total (-want +got):\n%s", diff)
	}
}

// TestKyvernoPolicyRuleInfo checks kyverno_policy_rule_info_total: one
// series of value 1 per rule of the server's ClusterPolicies and Policies
// (autogen rules included, as Kyverno's autogen.ComputeRules), with
// status_ready.
func TestKyvernoPolicyRuleInfo(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"p.yaml": latestTagPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	select {
	case <-ts.srv.store.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("policies not loaded after 10s")
	}
	var got []string
	for _, l := range series(t, ts.reg, "kyverno_policy_rule_info_total") {
		if l["otel_scope_name"] != "kyverno" || l["value"] != "1" || l["status_ready"] != "true" || l["policy_name"] != "disallow-latest-tag" ||
			l["policy_validation_mode"] != "audit" || l["policy_type"] != "cluster" || l["policy_namespace"] != "-" {
			t.Errorf("kyverno_policy_rule_info_total series %v, want value 1, ready, an audit ClusterPolicy disallow-latest-tag", l)
		}
		got = append(got, l["rule_type"]+" "+l["rule_name"])
	}
	want := []string{"validate autogen-cronjob-no-latest", "validate autogen-no-latest", "validate no-latest"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kyverno_policy_rule_info_total rules (-want +got):\n%s", diff)
	}
}

// TestRuleTypeLabels: the rule_type label of each rule type, in Kyverno's
// metrics (pkg/metrics/parsers.go: ParseRuleTypeFromEngineRuleResponse of
// a result, ParseRuleType of a policy's rule) and in Verdict's own.
func TestRuleTypeLabels(t *testing.T) {
	tests := []struct {
		typ         eval.RuleType
		wantKyverno string
		wantVerdict string
	}{
		{typ: eval.RuleValidation, wantKyverno: "validate", wantVerdict: "validate"},
		{typ: eval.RuleMutation, wantKyverno: "mutate", wantVerdict: "mutate"},
		{typ: eval.RuleGeneration, wantKyverno: "generate", wantVerdict: "generate"},
		{typ: eval.RuleImageVerify, wantKyverno: "imageVerify", wantVerdict: "verifyImages"},
		{typ: eval.RuleDeletion, wantKyverno: "-", wantVerdict: "validate"},
	}
	for _, tt := range tests {
		if got := kyvernoRuleTypes.label(tt.typ); got != tt.wantKyverno {
			t.Errorf("kyvernoRuleTypes.label(%s) = %s, want %s", tt.typ, got, tt.wantKyverno)
		}
		if got := verdictRuleTypes.label(tt.typ); got != tt.wantVerdict {
			t.Errorf("verdictRuleTypes.label(%s) = %s, want %s", tt.typ, got, tt.wantVerdict)
		}
	}
	rules := []struct {
		typ  policy.RuleType
		want string
	}{
		{typ: policy.Validate, want: "validate"},
		{typ: policy.Mutate, want: "mutate"},
		{typ: policy.Generate, want: "generate"},
		{typ: policy.VerifyImages, want: "imageVerify"},
	}
	for _, tt := range rules {
		if got := kyvernoRuleTypes.label(eval.RuleType(tt.typ.String())); got != tt.want {
			t.Errorf("kyvernoRuleTypes.label(rule %v) = %s, want %s", tt.typ, got, tt.want)
		}
	}
}
