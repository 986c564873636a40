package webhookproxy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/cases"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// seriesOf returns the series of metric name in reg as label maps, the
// value (the count, for a histogram) under "value", sorted.
func seriesOf(tb testing.TB, reg *prometheus.Registry, name string) []map[string]string {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var out []map[string]string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				l["value"] = fmt.Sprint(h.GetSampleCount())
			} else {
				l["value"] = fmt.Sprint(m.GetCounter().GetValue())
			}
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// TestKyvernoAdmissionMetrics checks kyverno_admission_requests_total and
// kyverno_admission_review_duration_seconds against the labels of
// Kyverno's RecordRequest (pkg/metrics/admission.go: lower-case operation,
// request_allowed, request_webhook of the path's configuration kind), the
// namespace filter and the cap on the kind and namespace pairs (two here:
// the third namespace is counted under _overflow), and
// kyverno_http_requests_total by method and path.
func TestKyvernoAdmissionMetrics(t *testing.T) {
	c := startDecisionServer(t, cases.RequireTeamLabel)
	p := startProxy(t, c, webhookproxy.Options{MetricsMaxSeries: 2, MetricsNamespaces: webhookproxy.MetricsNamespaces{Exclude: []string{"skip"}}}, nil, nil)
	pod := func(ns, labels string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":%q,"labels":{%s}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}`, ns, labels)
	}
	for _, r := range []struct{ path, ns, labels string }{
		{"/validate", "a", ``},              // denied: no team label
		{"/validate", "b", `"team":"x"`},    // allowed
		{"/mutate", "a", ``},                // allowed: nothing to mutate
		{"/validate", "c", `"team":"x"`},    // past the cap
		{"/validate", "skip", `"team":"x"`}, // excluded
	} {
		if code, _, body := p.post(t, r.path, review("u", "CREATE", "Pod", r.ns, pod(r.ns, r.labels))); code != 200 {
			t.Fatalf("POST %s in %s: %d %s", r.path, r.ns, code, body)
		}
	}
	series := func(kind, ns, allowed, webhook string) map[string]string {
		return map[string]string{"otel_scope_name": "kyverno", "otel_scope_version": "", "otel_scope_schema_url": "",
			"resource_kind": kind, "resource_namespace": ns, "resource_request_operation": "create",
			"request_allowed": allowed, "request_webhook": webhook, "value": "1"}
	}
	want := []map[string]string{
		series("Pod", "a", "false", "ValidatingWebhookConfiguration"),
		series("Pod", "a", "true", "MutatingWebhookConfiguration"),
		series("Pod", "b", "true", "ValidatingWebhookConfiguration"),
		series("_overflow", "_overflow", "true", "ValidatingWebhookConfiguration"),
	}
	slices.SortFunc(want, func(a, b map[string]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, name := range []string{"kyverno_admission_requests_total", "kyverno_admission_review_duration_seconds"} {
		if diff := cmp.Diff(want, seriesOf(t, p.registry, name)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if n := counterOf(t, p.registry, "kyverno_http_requests_total", "http_url", "/validate"); n != 4 {
		t.Errorf("kyverno_http_requests_total{http_url=\"/validate\"} = %v, want 4", n)
	}
	if n := counterOf(t, p.registry, "kyverno_http_requests_total", "http_method", "POST"); n != 5 {
		t.Errorf("kyverno_http_requests_total{http_method=\"POST\"} = %v, want 5", n)
	}
}
