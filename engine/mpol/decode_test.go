package mpol_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/mpol"
)

const addLabel = `
apiVersion: policies.kyverno.io/%s
kind: %s
metadata:
  name: add-label
  namespace: team
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
      expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'a': 'b'}}]"
`

func TestDecodeVersions(t *testing.T) {
	tests := []struct {
		name        string
		giveVersion string
		giveKind    string
	}{
		{name: "mpol v1", giveVersion: "v1", giveKind: "MutatingPolicy"},
		{name: "mpol v1beta1", giveVersion: "v1beta1", giveKind: "MutatingPolicy"},
		{name: "mpol v1alpha1", giveVersion: "v1alpha1", giveKind: "MutatingPolicy"},
		{name: "nmpol v1", giveVersion: "v1", giveKind: "NamespacedMutatingPolicy"},
		{name: "nmpol v1beta1", giveVersion: "v1beta1", giveKind: "NamespacedMutatingPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := mpol.Decode(tt.name, fmt.Appendf(nil, addLabel, tt.giveVersion, tt.giveKind))
			if err != nil {
				t.Fatalf("Decode(%s) error: %v", tt.name, err)
			}
			if len(docs) != 1 {
				t.Fatalf("Decode(%s) = %d documents, want 1", tt.name, len(docs))
			}
			d := docs[0]
			got := []string{d.Kind, d.Metadata.Name, d.Metadata.Namespace, string(d.Spec.Mutations[0].PatchType), string(d.Spec.Mutations[1].PatchType), d.Spec.Mutations[1].JSONPatch.Expression[:10]}
			want := []string{tt.giveKind, "add-label", "team", "ApplyConfiguration", "JSONPatch", "[JSONPatch"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decode(%s) fields (-want +got):\n%s", tt.name, diff)
			}
			if d.Namespaced() != (tt.giveKind == "NamespacedMutatingPolicy") {
				t.Errorf("Decode(%s).Namespaced() = %v", tt.name, d.Namespaced())
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	const head = "apiVersion: policies.kyverno.io/v1\nkind: MutatingPolicy\nmetadata: {name: a}\n"
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{name: "unknown spec field", give: head + "spec: {mutation: []}\n", wantCode: engine.CodeDecode, wantPath: "spec.mutation"},
		{name: "unknown field in a mutation", give: head + "spec: {mutations: [{patchTyp: JSONPatch}]}\n", wantCode: engine.CodeDecode, wantPath: "spec.mutations[0].patchTyp"},
		{name: "unknown field in an apply configuration", give: head + "spec: {mutations: [{applyConfiguration: {expresion: x}}]}\n", wantCode: engine.CodeDecode, wantPath: "spec.mutations[0].applyConfiguration.expresion"},
		{name: "wrong type", give: head + "spec: {mutations: {patchType: JSONPatch}}\n", wantCode: engine.CodeDecode, wantPath: "spec.mutations"},
		{name: "wrong type of a switch", give: head + "spec: {evaluation: {mutateExisting: {enabled: 'yes'}}}\n", wantCode: engine.CodeDecode, wantPath: "spec.evaluation.mutateExisting.enabled"},
		{name: "unknown target field", give: head + "spec: {targetMatchConstraints: {expresion: x}}\n", wantCode: engine.CodeDecode, wantPath: "spec.targetMatchConstraints.expresion"},
		{name: "unknown metadata field", give: "apiVersion: policies.kyverno.io/v1\nkind: MutatingPolicy\nmetadata: {name: a, labelz: {}}\nspec: {}\n", wantCode: engine.CodeDecode, wantPath: "metadata.labelz"},
		{name: "namespaced policy has no v1alpha1", give: "apiVersion: policies.kyverno.io/v1alpha1\nkind: NamespacedMutatingPolicy\nmetadata: {name: a}\nspec: {}\n", wantCode: engine.CodeUnsupported, wantPath: "apiVersion"},
		{name: "unknown version", give: "apiVersion: policies.kyverno.io/v2\nkind: MutatingPolicy\nmetadata: {name: a}\nspec: {}\n", wantCode: engine.CodeUnsupported, wantPath: "apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mpol.Decode(tt.name, []byte(tt.give))
			es := engine.As(err)
			if len(es) == 0 {
				t.Fatalf("Decode(%q) error = %v, want an engine error", tt.give, err)
			}
			if es[0].Code != tt.wantCode || es[0].Path != tt.wantPath {
				t.Errorf("Decode(%q) error = %s at %q, want %s at %q (%v)", tt.give, es[0].Code, es[0].Path, tt.wantCode, tt.wantPath, err)
			}
		})
	}
}

func TestDecodeSkipsOtherKinds(t *testing.T) {
	give := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n" + fmt.Sprintf(addLabel, "v1", "MutatingPolicy") +
		"---\napiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: v}\nspec: {}\n"
	docs, err := mpol.Decode("mixed", []byte(give))
	if err != nil {
		t.Fatalf("Decode(mixed) error: %v", err)
	}
	if len(docs) != 1 || docs[0].Metadata.Name != "add-label" {
		t.Errorf("Decode(mixed) = %d documents, want the MutatingPolicy only", len(docs))
	}
}
