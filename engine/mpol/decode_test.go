package mpol_test

import (
	"fmt"
	"strings"
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
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'a': 'b'}}]"
`

func TestDecodeVersions(t *testing.T) {
	// The served versions of each kind (the CRDs').
	tests := map[string][]string{
		"MutatingPolicy":           {"v1", "v1beta1", "v1alpha1"},
		"NamespacedMutatingPolicy": {"v1", "v1beta1"},
	}
	for kind, versions := range tests {
		for _, version := range versions {
			t.Run(kind+"/"+version, func(t *testing.T) {
				docs, err := mpol.Policies.Decode(kind, fmt.Appendf(nil, addLabel, version, kind))
				if err != nil || len(docs) != 1 {
					t.Fatalf("Decode(%s %s) = %d documents, error %v; want 1", kind, version, len(docs), err)
				}
				d := docs[0]
				m := d.Spec.Mutations
				got := []string{d.Kind, d.Metadata.Name, d.Metadata.Namespace, string(m[0].PatchType), string(m[1].PatchType), m[1].JSONPatch.Expression[:10]}
				want := []string{kind, "add-label", "team", "ApplyConfiguration", "JSONPatch", "[JSONPatch"}
				if diff := cmp.Diff(want, got); diff != "" || d.Namespaced() != (kind == "NamespacedMutatingPolicy") {
					t.Errorf("Decode(%s %s) fields (-want +got):\n%s namespaced: %v", kind, version, diff, d.Namespaced())
				}
			})
		}
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
			_, err := mpol.Policies.Decode(tt.name, []byte(tt.give))
			want := firstError{tt.wantCode, tt.wantPath}
			if got := firstErrorOf(err); got != want {
				t.Errorf("Decode(%q) error = %+v (%v), want %+v", tt.give, got, err, want)
			}
		})
	}
}

// firstError is the code and path of the first engine error.
type firstError struct {
	code engine.Code
	path string
}

func firstErrorOf(err error) firstError {
	es := engine.As(err)
	if len(es) == 0 {
		return firstError{}
	}
	return firstError{es[0].Code, es[0].Path}
}

func TestDecodeSkipsOtherKinds(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
		fmt.Sprintf(addLabel, "v1", "MutatingPolicy"),
		"apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: v}\nspec: {}\n",
		"apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e}\nspec: {}\n",
	}
	got, err := mpol.Policies.Decode("mixed", []byte(strings.Join(docs, "---\n")))
	var names []string
	for _, d := range got {
		names = append(names, d.Kind+"/"+d.Metadata.Name)
	}
	if diff := cmp.Diff([]string{"MutatingPolicy/add-label"}, names); err != nil || diff != "" {
		t.Errorf("Decode(mixed) error = %v, documents (-want +got):\n%s", err, diff)
	}
}
