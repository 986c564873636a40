package mpol

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// gadgetCRD is a CRD of test.verdict.io/v1 Gadget: a list-map keyed by
// name, an atomic list, an object that keeps unknown fields.
const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.test.verdict.io}
spec:
  group: test.verdict.io
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    size: {type: integer}
              tags:
                type: array
                items: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
  - name: v2
    served: true
    storage: false
`

func decodeYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSchemasMerge merges patches into a Gadget with the CRD's type, as
// Kubernetes' type converter made from the CRD merges them (Kyverno
// v1.19.0's CLI, with the CRD file: testdata/mpolcrd of kyvernotest).
func TestSchemasMerge(t *testing.T) {
	s, err := NewSchemas([]map[string]any{decodeYAML(t, gadgetCRD)})
	if err != nil {
		t.Fatalf("NewSchemas() error = %v", err)
	}
	gadget := `{apiVersion: test.verdict.io/v1, kind: Gadget, metadata: {name: g, namespace: default}, spec: {parts: [{name: a, size: 1}], tags: [x], extra: {anything: 1}}}`
	tests := []struct {
		name    string
		obj     string
		patch   string
		want    string
		wantErr string
	}{
		{
			name:  "list-map merged by key, unknown fields merged, metadata typed",
			obj:   gadget,
			patch: `{metadata: {labels: {team: blue}}, spec: {parts: [{name: b, size: 2}], extra: {more: "yes"}}}`,
			want:  `{apiVersion: test.verdict.io/v1, kind: Gadget, metadata: {name: g, namespace: default, labels: {team: blue}}, spec: {parts: [{name: a, size: 1}, {name: b, size: 2}], tags: [x], extra: {anything: 1, more: "yes"}}}`,
		},
		{name: "atomic list", obj: gadget, patch: `{spec: {tags: ["y"]}}`, wantErr: "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.tags"},
		{name: "field the schema lacks", obj: gadget, patch: `{spec: {color: red}}`, wantErr: `failed to convert patch object to typed object: .spec.color: field not declared in schema`},
		{name: "version without schema", obj: `{apiVersion: test.verdict.io/v2, kind: Gadget, metadata: {name: g}}`, patch: `{spec: {a: 1}}`, wantErr: errNoTypeConverter.Error()},
		{name: "other kind of the CRD's group and version", obj: `{apiVersion: test.verdict.io/v1, kind: Widget, metadata: {name: g}}`, patch: `{spec: {a: 1}}`, wantErr: "no corresponding type for test.verdict.io/v1, Kind=Widget"},
		{name: "built-in kind", obj: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, patch: `{data: {a: b}}`, want: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, patch := decodeYAML(t, tt.obj), decodeYAML(t, tt.patch)
			ty, err := s.TypeOf(obj)
			var got map[string]any
			if err == nil {
				got, err = mergeTyped(*ty, obj, patch, false)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("merge(%s) error = %v, want %q", tt.patch, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("merge(%s) error = %v", tt.patch, err)
			}
			if diff := cmp.Diff(decodeYAML(t, tt.want), got); diff != "" {
				t.Errorf("merge(%s) mismatch (-want +got):\n%s", tt.patch, diff)
			}
		})
	}
}

func TestNewSchemasErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "v1beta1", give: `{apiVersion: apiextensions.k8s.io/v1beta1, kind: CustomResourceDefinition, metadata: {name: a.b}}`, wantErr: errNotV1CRD.Error()},
		{name: "items as a list", give: `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a.b}, spec: {group: b, names: {kind: A, plural: as}, versions: [{name: v1, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: array, items: [{type: string}]}}}}}]}}`, wantErr: `CustomResourceDefinition "a.b" version v1: OpenAPIV3Schema 'items' must be a schema, but is an array`},
		{name: "not a CRD's shape", give: `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a.b}, spec: {versions: 3}}`, wantErr: `CustomResourceDefinition "a.b": json: cannot unmarshal`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSchemas([]map[string]any{decodeYAML(t, tt.give)})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewSchemas(%s) error = %v, want %q", tt.give, err, tt.wantErr)
			}
			if tt.name == "v1beta1" && !errors.Is(err, errNotV1CRD) {
				t.Errorf("NewSchemas(%s) error = %v, want errNotV1CRD", tt.give, err)
			}
		})
	}
	if s, err := NewSchemas(nil); s != nil || err != nil {
		t.Errorf("NewSchemas(nil) = %v, %v, want nil, nil", s, err)
	}
}
