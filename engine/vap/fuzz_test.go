package vap_test

import (
	"context"
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vap"
)

// FuzzDecode checks that no input makes Decode or DecodeBindings panic,
// that they return documents or an error, never both, and that every
// error is an engine error (with a code and a path).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(minimalPolicy))
	f.Add([]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","spec":{"paramRef":{"selector":{"matchExpressions":[{"key":"a","operator":"In","values":[1]}]}}}}`))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy, metadata: {name: x}, spec: {validations: [{expression: 1.5}]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := vap.Decode("fuzz.yaml", data)
		if err != nil && docs != nil {
			t.Fatalf("Decode(%q) returned documents and an error", data)
		}
		if err != nil && len(engine.As(err)) == 0 {
			t.Fatalf("Decode(%q) error %v holds no *engine.Error", data, err)
		}
		bs, err := vap.DecodeBindings("fuzz.yaml", data)
		if err != nil && bs != nil {
			t.Fatalf("DecodeBindings(%q) returned documents and an error", data)
		}
		if err != nil && len(engine.As(err)) == 0 {
			t.Fatalf("DecodeBindings(%q) error %v holds no *engine.Error", data, err)
		}
	})
}

// FuzzCompileEvaluate checks that no decoded policy or binding makes
// Compile or CompileBinding panic, and that a compiled policy evaluates a
// Deployment and a Namespace without panicking, in both modes, every
// result having a status.
func FuzzCompileEvaluate(f *testing.F) {
	f.Add([]byte(minimalPolicy))
	f.Add([]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"a"},"spec":{"failurePolicy":"Ignore","matchConstraints":{"resourceRules":[{"apiGroups":["*"],"apiVersions":["*"],"operations":["*"],"resources":["*"]}]},"matchConditions":[{"name":"m","expression":"has(object.metadata)"}],"validations":[{"expression":"namespaceObject.metadata.name == 'x'"}]}}`))
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "ns", "labels": map[string]any{"app": "x"}},
		"spec": map[string]any{"replicas": 3.0}}
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns"}}
	params := func(context.Context, *vap.ParamKind, *vap.Binding, string) ([]map[string]any, error) {
		return []map[string]any{{"data": map[string]any{"max": "5"}}, {"data": map[string]any{"max": "7"}}}, nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := vap.Decode("fuzz.yaml", data)
		if err != nil {
			return
		}
		bdocs, err := vap.DecodeBindings("fuzz.yaml", data)
		if err != nil {
			return
		}
		var bs []*vap.Binding
		for _, d := range bdocs {
			b, err := vap.CompileBinding(d)
			if err != nil {
				if len(engine.As(err)) == 0 {
					t.Fatalf("CompileBinding(%q) error %v holds no *engine.Error", data, err)
				}
				continue
			}
			bs = append(bs, b)
		}
		for _, d := range docs {
			p, err := vap.Compile(d)
			if err != nil {
				if len(engine.As(err)) == 0 {
					t.Fatalf("Compile(%q) error %v holds no *engine.Error", data, err)
				}
				continue
			}
			for _, obj := range []map[string]any{deploy, ns} {
				for _, cli := range []bool{false, true} {
					in := vap.NewInput(vap.Request{Object: obj}, vap.Options{CLI: cli, Params: params})
					if r, ok := p.Evaluate(t.Context(), in, bs); ok && r.Status == "" {
						t.Fatalf("Evaluate(%q) gave a result without status", data)
					}
				}
			}
		}
	})
}
