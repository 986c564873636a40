package eval_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// cloneAndBind generates, for a Namespace, a copy of a Secret of another
// namespace (with an owner there, a uid and a resourceVersion) and a
// cluster-scoped ClusterRoleBinding, named in the Namespace.
const cloneAndBind = `apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: clone-and-bind}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]}
  generate:
  - expression: >-
      generator.Apply(object.metadata.name, [
        {"apiVersion": dyn("v1"), "kind": dyn("Secret"), "metadata": dyn({"name": dyn("s"), "namespace": dyn("src"), "uid": dyn("u-src"), "resourceVersion": dyn("7"),
          "ownerReferences": dyn([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-owner"}])})},
        {"apiVersion": dyn("rbac.authorization.k8s.io/v1"), "kind": dyn("ClusterRoleBinding"), "metadata": dyn({"name": "b"})}])
`

func TestGeneratingPolicyObjects(t *testing.T) {
	docs, err := gpol.Policies.Decode("test", []byte(cloneAndBind))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.CompileGenerating(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	req := &eval.Request{
		Object:    map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team", "uid": "u-team"}},
		Operation: "CREATE",
	}
	labels := func(extra map[string]any) map[string]any {
		// Kyverno's labels (pkg/cel/libs addGenerateLabels).
		l := map[string]any{
			"app.kubernetes.io/managed-by": "kyverno", "generate.kyverno.io/policy-name": "clone-and-bind",
			"generate.kyverno.io/trigger-name": "team", "generate.kyverno.io/trigger-namespace": "",
			"generate.kyverno.io/trigger-uid": "u-team", "generate.kyverno.io/trigger-kind": "Namespace",
			"generate.kyverno.io/trigger-group": "", "generate.kyverno.io/trigger-version": "v1",
		}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	tests := []struct {
		name string
		cli  bool
		want []map[string]any
	}{{
		// As Kyverno's controller creates them: server fields and the
		// owner of another namespace dropped, no namespace for a
		// cluster-scoped kind.
		name: "cluster",
		want: []map[string]any{
			{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "team",
				"labels": labels(map[string]any{"generate.kyverno.io/source-uid": "u-src"})}},
			{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "b", "labels": labels(nil)}},
		},
	}, {
		// As Kyverno's CLI shows them: the call's namespace on each.
		name: "Kyverno CLI", cli: true,
		want: []map[string]any{
			{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "team", "uid": "u-src", "resourceVersion": "7",
				"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-owner"}}}},
			{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "b", "namespace": "team"}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := eval.New(eval.Options{KyvernoCLI: tt.cli}).Evaluate(context.Background(), []*policy.Policy{p}, req)
			var got []map[string]any
			for _, g := range resp.Generated {
				if g.Policy != "clone-and-bind" || g.Rule != "clone-and-bind" || g.Action != eval.GenerateCreate {
					t.Errorf("Generated %+v, want policy and rule clone-and-bind, action create", g)
				}
				got = append(got, g.Object)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) generated (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
