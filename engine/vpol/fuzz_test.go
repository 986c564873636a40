package vpol_test

import (
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// FuzzDecode checks that no input makes Decode or DecodeExceptions panic,
// that they return documents or an error, never both, and that every
// error is an engine error (with a code and a path).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(policyYAML("v1", "ValidatingPolicy")))
	f.Add([]byte(policyYAML("v1alpha1", "NamespacedValidatingPolicy")))
	f.Add([]byte("apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e}\nspec: {policyRefs: [{name: a, kind: ValidatingPolicy}], matchConditions: [{name: n, expression: 'true'}]}\n"))
	f.Add([]byte(`{"apiVersion":"policies.kyverno.io/v1beta1","kind":"ValidatingPolicy","spec":{"matchConstraints":{"objectSelector":{"matchExpressions":[{"key":"a","operator":"In","values":[1]}]}}}}`))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: policies.kyverno.io/v1, kind: ValidatingPolicy, metadata: {name: x}, spec: {webhookConfiguration: {timeoutSeconds: 1.5}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := vpol.Decode("fuzz.yaml", data)
		if err != nil && docs != nil {
			t.Fatalf("Decode(%q) returned documents and an error", data)
		}
		if err != nil && len(engine.As(err)) == 0 {
			t.Fatalf("Decode(%q) error %v holds no *engine.Error", data, err)
		}
		exs, err := vpol.DecodeExceptions("fuzz.yaml", data)
		if err != nil && exs != nil {
			t.Fatalf("DecodeExceptions(%q) returned documents and an error", data)
		}
		if err != nil && len(engine.As(err)) == 0 {
			t.Fatalf("DecodeExceptions(%q) error %v holds no *engine.Error", data, err)
		}
	})
}

// FuzzCompileEvaluate checks that no decoded policy makes Compile panic,
// and that a compiled one evaluates a Pod and a Deployment without
// panicking, every result having a status.
func FuzzCompileEvaluate(f *testing.F) {
	f.Add([]byte(policyYAML("v1", "ValidatingPolicy")))
	f.Add([]byte(`{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"a"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["*"],"resources":["pods"]}]},"variables":[{"name":"v","expression":"object.spec.containers.map(c, c.image)"}],"validations":[{"expression":"variables.v.all(i, i.startsWith('x'))","messageExpression":"'bad: ' + variables.v.join(',')"}],"auditAnnotations":[{"key":"k","valueExpression":"object.metadata.name"}]}}`))
	f.Add([]byte(`{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"a"},"spec":{"evaluation":{"mode":"JSON"},"matchConditions":[{"name":"m","expression":"has(object.a)"}],"validations":[{"expression":"resource.Get('v1','pods','a','b') == null"}]}}`))
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "ns"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "ns"},
		"spec": map[string]any{"template": map[string]any{"spec": pod["spec"]}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := vpol.Decode("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, d := range docs {
			p, err := vpol.Compile(d)
			if err != nil {
				if len(engine.As(err)) == 0 {
					t.Fatalf("Compile(%q) error %v holds no *engine.Error", data, err)
				}
				continue
			}
			for _, obj := range []map[string]any{pod, deploy} {
				for _, r := range p.Evaluate(t.Context(), vpol.NewInput(vpol.Request{Object: obj}), nil) {
					if r.Status == "" {
						t.Fatalf("Evaluate(%q) gave a result without status", data)
					}
				}
			}
		}
	})
}
