package kubemetrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		method, path, watch string
		want                Call
		wantOK              bool
	}{
		{"GET", "/api/v1/namespaces/shop/pods/p", "", Call{"get", "dynamic", "pods", "shop"}, true},
		{"GET", "/api/v1/namespaces/shop/pods", "", Call{"list", "dynamic", "pods", "shop"}, true},
		{"GET", "/api/v1/pods", "true", Call{"watch", "dynamic", "pods", ""}, true},
		{"GET", "/api/v1/namespaces/shop", "", Call{"get", "dynamic", "namespaces", ""}, true},
		{"GET", "/api/v1/namespaces", "", Call{"list", "dynamic", "namespaces", ""}, true},
		{"POST", "/apis/apps/v1/namespaces/shop/deployments", "", Call{"create", "dynamic", "deployments", "shop"}, true},
		{"PUT", "/apis/kyverno.io/v1/clusterpolicies/p/status", "", Call{"update_status", "kyverno", "clusterpolicies", ""}, true},
		{"PUT", "/apis/kyverno.io/v1/clusterpolicies/p", "", Call{"update", "kyverno", "clusterpolicies", ""}, true},
		{"PATCH", "/apis/wgpolicyk8s.io/v1alpha2/namespaces/shop/policyreports/r", "", Call{"patch", "policyreport", "policyreports", "shop"}, true},
		{"DELETE", "/apis/openreports.io/v1alpha1/namespaces/shop/reports/r", "", Call{"delete", "policyreport", "reports", "shop"}, true},
		{"DELETE", "/apis/openreports.io/v1alpha1/namespaces/shop/reports", "", Call{"delete_collection", "policyreport", "reports", "shop"}, true},
		{"GET", "/apis", "", Call{}, false},
		{"GET", "/api/v1", "", Call{}, false},
		{"GET", "/version", "", Call{}, false},
		{"GET", "/apis/apps/v1", "", Call{}, false},
		{"OPTIONS", "/api/v1/pods", "", Call{}, false},
	}
	for _, tt := range tests {
		got, ok := Classify(tt.method, tt.path, tt.watch)
		if ok != tt.wantOK || got != tt.want {
			t.Errorf("Classify(%s, %s, %q) = %+v, %v, want %+v, %v", tt.method, tt.path, tt.watch, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestWrapCounts sends requests through a wrapped client configuration to
// a local server, past a cap of two series.
func TestWrapCounts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{}")) }))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	q, err := New(reg, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: srv.URL}
	q.Wrap(cfg)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/v1/namespaces/a/pods", "/api/v1/namespaces/a/pods/x", "/api/v1/namespaces/b/pods", "/api/v1/namespaces/c/pods", "/version"} {
		resp, err := hc.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() != "otel_scope_version" && l.GetName() != "otel_scope_schema_url" {
					key += fmt.Sprintf(" %s=%s", l.GetName(), l.GetValue())
				}
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"kyverno_client_queries_total client_type=dynamic operation=list otel_scope_name=kyverno resource_kind=pods resource_namespace=a":              1,
		"kyverno_client_queries_total client_type=dynamic operation=get otel_scope_name=kyverno resource_kind=pods resource_namespace=a":               1,
		"kyverno_client_queries_total client_type=dynamic operation=list otel_scope_name=kyverno resource_kind=pods resource_namespace=b":              1,
		"kyverno_client_queries_total client_type=dynamic operation=list otel_scope_name=kyverno resource_kind=_overflow resource_namespace=_overflow": 1,
		"verdict_client_queries_label_overflow_total": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics after 5 requests (-want +got):\n%s", diff)
	}
}
