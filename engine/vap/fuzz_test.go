package vap_test

import (
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
