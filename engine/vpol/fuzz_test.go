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
