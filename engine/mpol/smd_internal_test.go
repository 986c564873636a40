package mpol

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	goyaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// fullMerge is structured-merge-diff's merge of the whole object, as
// Kubernetes' patch.ApplyStructuredMergeDiff does it: what mergeTyped,
// which merges only what the patch reaches, must give.
func fullMerge(t *testing.T, ty typed.ParseableType, obj, patch map[string]any) map[string]any {
	t.Helper()
	live, err := ty.FromUnstructured(obj, typed.AllowDuplicates)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ty.FromUnstructured(patch)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := live.Merge(p)
	if err != nil {
		t.Fatal(err)
	}
	return merged.AsValue().Unstructured().(map[string]any)
}

// TestMergeTypedPruned compares mergeTyped with the merge of the whole
// object: granular maps (labels) and structs merged field by field,
// lists merged by key, an atomic struct (a Deployment's selector)
// replaced whole, fields the patch does not reach kept, new ones added.
func TestMergeTypedPruned(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
  labels: {app: web, tier: front}
  annotations: {note: keep}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front]}]
  template:
    metadata:
      labels: {app: web}
    spec:
      securityContext: {runAsNonRoot: true, fsGroup: 2000}
      containers:
      - {name: web, image: nginx, ports: [{containerPort: 80}], resources: {limits: {cpu: "1"}}}
      - {name: side, image: busybox}
      volumes: [{name: data, emptyDir: {}}]
status: {replicas: 3}
`
	tests := []struct {
		name        string
		patch       string
		allowAtomic bool
	}{
		{"a label", `{metadata: {labels: {team: a}}}`, false},
		{"a label replaced", `{metadata: {labels: {tier: back}}}`, false},
		{"a struct's field deep down", `{spec: {template: {spec: {securityContext: {runAsUser: 1000}}}}}`, false},
		{"a list merged by key", `{spec: {template: {spec: {containers: [{name: side, imagePullPolicy: Always}, {name: new, image: x}]}}}}`, false},
		{"a scalar and a new field", `{spec: {replicas: 5, minReadySeconds: 10}}`, false},
		{"an atomic struct replaced", `{spec: {selector: {matchLabels: {app: other}}}}`, true},
		{"fields the object lacks", `{spec: {template: {metadata: {annotations: {a: b}}, spec: {hostname: h}}}}`, false},
		{"an atomic map the object lacks", `{spec: {template: {spec: {nodeSelector: {disk: ssd}}}}}`, true},
		{"several branches", `{metadata: {annotations: {other: x}}, spec: {template: {metadata: {labels: {v: "2"}}, spec: {containers: [{name: web, image: nginx:2}]}}}}`, false},
	}
	ts, err := builtins()
	if err != nil {
		t.Fatal(err)
	}
	ty, err := ts.typeOf(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj, patch map[string]any
			if err := yaml.Unmarshal([]byte(deployment), &obj); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tt.patch), &patch); err != nil {
				t.Fatal(err)
			}
			want := fullMerge(t, *ty, obj, patch)
			got, err := mergeTyped(*ty, obj, patch, tt.allowAtomic)
			if err != nil {
				t.Fatalf("mergeTyped(%s) error = %v", tt.patch, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mergeTyped(%s) mismatch with the whole object's merge (-want +got):\n%s", tt.patch, diff)
			}
			var again map[string]any
			if err := yaml.Unmarshal([]byte(deployment), &again); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(again, obj); diff != "" {
				t.Errorf("mergeTyped(%s) modified the object (-before +after):\n%s", tt.patch, diff)
			}
		})
	}
}

// TestReadBuiltins checks that the fast reading of builtins.yaml gives
// what go-yaml gives, and that a document smdReader does not expect is
// left to go-yaml.
func TestReadBuiltins(t *testing.T) {
	var want struct {
		Kinds map[string]string   `yaml:"kinds"`
		Types []smdschema.TypeDef `yaml:"types"`
	}
	if err := goyaml.Unmarshal(builtinsYAML, &want); err != nil {
		t.Fatal(err)
	}
	v, ok := kyverno.ParseDocument(string(builtinsYAML))
	if !ok {
		t.Fatal("kyverno.ParseDocument(builtins.yaml) declined the document, want it read")
	}
	var r smdReader
	kinds, types := r.builtins(v)
	if r.bad {
		t.Fatal("smdReader.builtins(builtins.yaml) found something unexpected, want it read")
	}
	opts := cmpopts.IgnoreUnexported(smdschema.Map{})
	if diff := cmp.Diff(want.Kinds, kinds); diff != "" {
		t.Errorf("smdReader.builtins(builtins.yaml) kinds differ from go-yaml's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Types, types, opts); diff != "" {
		t.Errorf("smdReader.builtins(builtins.yaml) types differ from go-yaml's (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		give string
	}{
		{"unknown key", "kinds: {v1/Pod: p}\ntypes:\n- name: p\n  scalr: string\n"},
		{"number for a string", "kinds: {v1/Pod: 1}\n"},
		{"defaults", "types:\n- name: p\n  map:\n    fields:\n    - {name: a, default: 1.5}\n    - {name: b, default: 0}\n    - {name: c, default: {}}\n    - {name: d, default: [x, 2, false]}\n    - {name: e, default: null}\n"},
		{"unions", "types:\n- name: p\n  map:\n    unions:\n    - discriminator: d\n      deduceInvalidDiscriminator: true\n      fields: [{fieldName: a, discriminatorValue: A}]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kinds, types, err := readBuiltins([]byte(tt.give))
			if err != nil {
				t.Fatalf("readBuiltins(%q) = %v", tt.give, err)
			}
			var want struct {
				Kinds map[string]string   `yaml:"kinds"`
				Types []smdschema.TypeDef `yaml:"types"`
			}
			if err := goyaml.Unmarshal([]byte(tt.give), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Kinds, kinds); diff != "" {
				t.Errorf("readBuiltins(%q) kinds differ from go-yaml's (-want +got):\n%s", tt.give, diff)
			}
			if diff := cmp.Diff(want.Types, types, opts); diff != "" {
				t.Errorf("readBuiltins(%q) types differ from go-yaml's (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
