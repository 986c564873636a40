package mpol_test

import (
	"testing"

	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// TestEvaluateTargetWithoutMutateExisting: a policy without
// mutateExisting has no targets: EvaluateTarget is an error result naming
// the field, TriggerMatches false, and nothing is patched.
func TestEvaluateTargetWithoutMutateExisting(t *testing.T) {
	const doc = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: plain}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/data/x', value: 'y'}]"
`
	docs, err := mpol.Policies.Decode("plain.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := mpol.Compile(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "a"}, "data": map[string]any{}}
	in := vpol.NewInput(vpol.Request{Object: cm})
	if p.TriggerMatches(t.Context(), in, false) {
		t.Errorf("TriggerMatches(plain) = true, want false")
	}
	r, patched := p.EvaluateTarget(t.Context(), in, cm, nil)
	if r.Status != vpol.StatusError || r.Path != "spec.evaluation.mutateExisting" || patched != nil {
		t.Errorf("EvaluateTarget(plain) = %+v, %v; want an error at spec.evaluation.mutateExisting, nil", r, patched)
	}
}
