package kubesource_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/kubesource"
)

const mutatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: add-team
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
`

const namespacedMutatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedMutatingPolicy
metadata:
  name: ns-team
  namespace: shop
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/metadata/labels/shop", value: "yes"}]'
`

// TestMutatingPolicies checks that the MutatingPolicies and
// NamespacedMutatingPolicies are read, with Namespace limiting the
// namespaced ones.
func TestMutatingPolicies(t *testing.T) {
	other := object(t, namespacedMutatingPolicy)
	other.SetNamespace("other")
	const (
		mp       = "kubernetes:MutatingPolicy/add-team"
		nmpShop  = "kubernetes:NamespacedMutatingPolicy/shop/ns-team"
		nmpOther = "kubernetes:NamespacedMutatingPolicy/other/ns-team"
	)
	tests := []struct {
		name        string
		opts        kubesource.Options
		wantOrigins []string
	}{
		{name: "every namespace", wantOrigins: []string{mp, nmpOther, nmpShop}},
		{name: "one namespace", opts: kubesource.Options{Namespace: "shop"}, wantOrigins: []string{mp, nmpShop}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Client = newFake([]runtime.Object{object(t, mutatingPolicy), object(t, namespacedMutatingPolicy), other.DeepCopy()}...)
			tt.opts.Debounce = 10 * time.Millisecond
			src, err := kubesource.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			runSource(t, src, rec.update)
			if diff := cmp.Diff(tt.wantOrigins, origins(rec.next(t))); diff != "" {
				t.Errorf("origins mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerWithMutatingPolicies runs a decision server fed by the
// source: a MutatingPolicy and a NamespacedMutatingPolicy created in the
// cluster patch a Pod of the namespace, and a deleted one no longer does.
func TestServerWithMutatingPolicies(t *testing.T) {
	dc := newFake()
	src, err := kubesource.New(kubesource.Options{Client: dc, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := servertest.Dial(t, servertest.Start(t, server.Options{Sources: []server.PolicySource{src}}), client.Options{WaitForReady: true})
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
	eventually := func(want []map[string]any) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := c.EvaluateResource(t.Context(), pod)
			if err != nil {
				t.Fatalf("EvaluateResource() = %v", err)
			}
			var got []map[string]any
			if p := resp.GetJsonPatch(); len(p) > 0 {
				if err := json.Unmarshal(p, &got); err != nil {
					t.Fatalf("patch %s: %v", p, err)
				}
			}
			if cmp.Equal(want, got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("patch = %v, want %v", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, err := dc.Resource(kubesource.MutatingPolicies).Create(t.Context(), object(t, mutatingPolicy), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually([]map[string]any{{"op": "add", "path": "/metadata/labels/team", "value": "a"}})
	if _, err := dc.Resource(kubesource.NamespacedMutatingPolicies).Namespace("shop").Create(t.Context(), object(t, namespacedMutatingPolicy), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually([]map[string]any{
		{"op": "add", "path": "/metadata/labels/shop", "value": "yes"},
		{"op": "add", "path": "/metadata/labels/team", "value": "a"},
	})
	if err := dc.Resource(kubesource.MutatingPolicies).Delete(t.Context(), "add-team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually([]map[string]any{{"op": "add", "path": "/metadata/labels/shop", "value": "yes"}})
}
