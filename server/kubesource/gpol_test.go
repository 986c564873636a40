package kubesource_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/verdict-policy/verdict/server/kubesource"
)

const (
	generatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: add-netpol}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]}
  generate: [{expression: 'generator.Apply(object.metadata.name, [])'}]
`
	namespacedGeneratingPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedGeneratingPolicy
metadata: {name: add-cm, namespace: shop}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}]}
  generate: [{expression: 'generator.Apply([])'}]
`
	deletingPolicy = `apiVersion: policies.kyverno.io/v1
kind: DeletingPolicy
metadata: {name: cleanup}
spec:
  schedule: "*/1 * * * *"
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
`
	namespacedDeletingPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedDeletingPolicy
metadata: {name: cleanup, namespace: other}
spec:
  schedule: "*/1 * * * *"
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
`
)

func TestGeneratingAndDeletingPolicies(t *testing.T) {
	objs := func() []runtime.Object {
		return []runtime.Object{object(t, generatingPolicy), object(t, namespacedGeneratingPolicy), object(t, deletingPolicy), object(t, namespacedDeletingPolicy)}
	}
	const (
		gp  = "kubernetes:GeneratingPolicy/add-netpol"
		ngp = "kubernetes:NamespacedGeneratingPolicy/shop/add-cm"
		dp  = "kubernetes:DeletingPolicy/cleanup"
		ndp = "kubernetes:NamespacedDeletingPolicy/other/cleanup"
	)
	tests := []struct {
		name        string
		opts        kubesource.Options
		wantOrigins []string
	}{
		{"every namespace", kubesource.Options{}, []string{dp, gp, ndp, ngp}},
		{"one namespace", kubesource.Options{Namespace: "shop"}, []string{dp, gp, ngp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Client = newFake(objs()...)
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
