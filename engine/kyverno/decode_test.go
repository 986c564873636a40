package kyverno

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

// wantErr is an expected error: the document it is in, its code and path.
type wantErr struct {
	Index int
	Line  int
	Code  engine.Code
	Path  string
}

// errorsOf flattens err into the engine errors of every document.
func errorsOf(err error) []wantErr {
	var out []wantErr
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var de *DocumentError
		if errors.As(err, &de) {
			for _, e := range engine.As(de.Err) {
				out = append(out, wantErr{Index: de.Index, Line: de.Line, Code: e.Code, Path: e.Path})
			}
			return
		}
		for _, e := range engine.As(err) {
			out = append(out, wantErr{Code: e.Code, Path: e.Path})
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

const podRule = `
  - name: check
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: m
      pattern:
        spec:
          containers:
          - image: "nginx:*"
`

func podRuleWant() Rule {
	return Rule{
		Name: "check",
		Match: MatchResources{Any: []ResourceFilter{{
			Resources: &ResourceDescription{Kinds: []string{"Pod"}},
		}}},
		Validate: &Validation{
			Message: "m",
			Pattern: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "nginx:*"}}}},
		},
	}
}

func TestDecodePolicies(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []*Document
	}{
		{
			name: "cluster policy v1",
			give: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
  annotations:
    pod-policies.kyverno.io/autogen-controllers: none
spec:
  background: false
  webhookTimeoutSeconds: 10
  rules:` + podRule,
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy",
				Metadata: ObjectMeta{Name: "p", Annotations: map[string]string{"pod-policies.kyverno.io/autogen-controllers": "none"}},
				Spec:     Spec{Background: ptr(false), WebhookTimeoutSeconds: ptr(int32(10)), Rules: []Rule{podRuleWant()}},
			}},
		},
		{
			name: "policy v2beta1 and a document that is not an object",
			give: "# a comment\n---\njust a string\n---\napiVersion: kyverno.io/v2beta1\nkind: Policy\nmetadata:\n  name: p\n  namespace: ns\nspec:\n  rules:" + podRule,
			want: []*Document{{
				APIVersion: "kyverno.io/v2beta1", Kind: "Policy",
				Metadata: ObjectMeta{Name: "p", Namespace: "ns"},
				Spec:     Spec{Rules: []Rule{podRuleWant()}},
			}},
		},
		{
			name: "documents that are not Kubernetes objects or that Kyverno has no schema for are skipped",
			give: "a: 1\n---\n- x\n---\napiVersion: example.com/v1\nkind: Widget\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n---\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\n",
			want: []*Document{{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"}}},
		},
		{
			name: "list",
			give: `apiVersion: v1
kind: List
items:
- apiVersion: kyverno.io/v1
  kind: ClusterPolicy
  metadata: {name: a}
- not an object
- {apiVersion: v1, kind: ConfigMap}
- apiVersion: kyverno.io/v1
  kind: ClusterPolicy
  metadata: {name: b}
`,
			want: []*Document{
				{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "a"}},
				{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "b"}},
			},
		},
		{
			name: "json",
			give: `{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
 "spec": {"validationFailureAction": "Enforce", "rules": [{"name": "r", "match": {"resources": {"kinds": ["Pod"], "selector": {}}},
   "validate": {"deny": {"conditions": [{"key": 1, "operator": "Equals", "value": 1}]}}}]}}`,
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"},
				Spec: Spec{ValidationFailureAction: "Enforce", Rules: []Rule{{
					Name:     "r",
					Match:    MatchResources{Resources: &ResourceDescription{Kinds: []string{"Pod"}, Selector: &LabelSelector{}}},
					Validate: &Validation{Deny: &Deny{Conditions: []any{map[string]any{"key": 1.0, "operator": "Equals", "value": 1.0}}}},
				}}},
			}},
		},
		{
			name: "empty values stay empty, not absent",
			give: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match:
      resources:
        kinds: []
        annotations: {}
        selector: {}
    preconditions: []
    validate:
      pattern: {}
`,
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"},
				Spec: Spec{Rules: []Rule{{
					Name:          "r",
					Match:         MatchResources{Resources: &ResourceDescription{Kinds: []string{}, Annotations: map[string]string{}, Selector: &LabelSelector{}}},
					Preconditions: []any{},
					Validate:      &Validation{Pattern: map[string]any{}},
				}}},
			}},
		},
		{
			name: "null is absent",
			give: "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p, labels: null}\nspec:\n  background: ~\n  rules: null\n",
			want: []*Document{{APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"}}},
		},
		{
			name: "unknown fields in a nested foreach are ignored, as in Kyverno",
			give: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        foreach:
        - list: element.ports
          bogus: 1
          deny: {conditions: {any: [{key: a, operator: Equals, value: b}]}}
`,
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"},
				Spec: Spec{Rules: []Rule{{
					Name:  "r",
					Match: MatchResources{Any: []ResourceFilter{{Resources: &ResourceDescription{Kinds: []string{"Pod"}}}}},
					Validate: &Validation{Foreach: []ForEachValidation{{
						List: "request.object.spec.containers",
						Foreach: []ForEachValidation{{
							List: "element.ports",
							Deny: &Deny{Conditions: map[string]any{"any": []any{map[string]any{"key": "a", "operator": "Equals", "value": "b"}}}},
						}},
					}}},
				}}},
			}},
		},
		{
			name: "yaml 1.1 scalars as Kubernetes reads them",
			give: "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  background: yes\n  rules:\n  - name: r\n    match: {resources: {kinds: [Pod]}}\n    validate: {pattern: {a: on, b: 017, c: '017', d: 1.50}}\n",
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"},
				Spec: Spec{Background: ptr(true), Rules: []Rule{{
					Name:     "r",
					Match:    MatchResources{Resources: &ResourceDescription{Kinds: []string{"Pod"}}},
					Validate: &Validation{Pattern: map[string]any{"a": true, "b": 15.0, "c": "017", "d": 1.5}},
				}}},
			}},
		},
		{
			name: "generate with embedded pattern fields and user info",
			give: `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match:
      any:
      - resources: {kinds: [Namespace]}
        clusterRoles: [admin]
    generate:
      apiVersion: v1
      kind: ConfigMap
      name: cm
      namespace: "{{request.object.metadata.name}}"
      synchronize: true
      data: {data: {k: v}}
`,
			want: []*Document{{
				APIVersion: "kyverno.io/v1", Kind: "ClusterPolicy", Metadata: ObjectMeta{Name: "p"},
				Spec: Spec{Rules: []Rule{{
					Name: "r",
					Match: MatchResources{Any: []ResourceFilter{{
						UserInfo:  UserInfo{ClusterRoles: []string{"admin"}},
						Resources: &ResourceDescription{Kinds: []string{"Namespace"}},
					}}},
					Generate: &Generation{
						Synchronize: true,
						GeneratePattern: GeneratePattern{
							APIVersion: "v1", Kind: "ConfigMap", Name: "cm", Namespace: "{{request.object.metadata.name}}",
							Data: map[string]any{"data": map[string]any{"k": "v"}},
						},
					},
				}}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePolicies("test.yaml", []byte(tt.give))
			if err != nil {
				t.Fatalf("DecodePolicies() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodePolicies() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodePoliciesErrors(t *testing.T) {
	const head = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n"
	const headV2 = "apiVersion: kyverno.io/v2beta1\nkind: ClusterPolicy\nmetadata:\n  name: p\n"
	tests := []struct {
		name string
		give string
		want []wantErr
	}{
		{
			name: "unknown field with indices",
			give: head + "spec:\n  rules:\n  - name: a\n  - name: b\n  - name: c\n    validate:\n      patern: {}\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "spec.rules[2].validate.patern"}},
		},
		{
			name: "every problem of a document",
			give: head + "  foo: bar\nspec:\n  background: 'yes'\n  rules:\n  - name: 1\n    match:\n      any:\n      - resources:\n          kinds: [Pod, 2]\n    exclude: []\n",
			want: []wantErr{
				{1, 1, engine.CodeDecode, "metadata.foo"},
				{1, 1, engine.CodeDecode, "spec.background"},
				{1, 1, engine.CodeDecode, "spec.rules[0].exclude"},
				{1, 1, engine.CodeDecode, "spec.rules[0].match.any[0].resources.kinds[1]"},
				{1, 1, engine.CodeDecode, "spec.rules[0].name"},
			},
		},
		{
			name: "map keys in paths",
			give: head + "  labels:\n    a.b/c: 1\n",
			want: []wantErr{{1, 1, engine.CodeDecode, `metadata.labels["a.b/c"]`}},
		},
		{
			name: "integers",
			give: head + "spec:\n  webhookTimeoutSeconds: 1.5\n  rules:\n  - name: r\n    match: {resources: {kinds: [Pod]}}\n---\n" + head + "spec:\n  webhookTimeoutSeconds: 4294967296\n",
			want: []wantErr{
				{1, 1, engine.CodeDecode, "spec.webhookTimeoutSeconds"},
				{2, 11, engine.CodeDecode, "spec.webhookTimeoutSeconds"},
			},
		},
		{
			name: "v2beta1 has no inline match resources nor allowExistingViolations",
			give: headV2 + "spec:\n  rules:\n  - name: r\n    match:\n      resources: {kinds: [Pod]}\n    validate:\n      allowExistingViolations: true\n",
			want: []wantErr{
				{1, 1, engine.CodeDecode, "spec.rules[0].match.resources"},
				{1, 1, engine.CodeDecode, "spec.rules[0].validate.allowExistingViolations"},
			},
		},
		{
			name: "verifyImages is checked against the schema",
			give: head + "spec:\n  rules:\n  - name: r\n    match: {resources: {kinds: [Pod]}}\n    verifyImages:\n    - imageReferences: ['*']\n      atestors: []\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "spec.rules[0].verifyImages[0].atestors"}},
		},
		{
			name: "wrong type in a nested foreach",
			give: head + "spec:\n  rules:\n  - name: r\n    match: {resources: {kinds: [Pod]}}\n    validate:\n      foreach:\n      - list: x\n        foreach:\n        - list: 5\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "spec.rules[0].validate.foreach[0].foreach[0].list"}},
		},
		{
			name: "repeated key",
			give: head + "spec:\n  background: true\n  background: false\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}},
		},
		{
			name: "yaml syntax error",
			give: "a: 1\n---\n" + head + "spec: [\n",
			want: []wantErr{{2, 3, engine.CodeDecode, ""}},
		},
		{
			name: "invalid separator",
			give: head + "---x\n",
			want: []wantErr{{0, 0, engine.CodeDecode, ""}},
		},
		{
			name: "other kinds are not supported",
			give: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\n---\napiVersion: kyverno.io/v2\nkind: ClusterPolicy\n",
			want: []wantErr{
				{1, 1, engine.CodeUnsupported, "kind"},
				{2, 5, engine.CodeUnsupported, "kind"},
				{3, 8, engine.CodeUnsupported, "kind"},
			},
		},
		{
			name: "missing kind",
			give: "apiVersion: kyverno.io/v1\nmetadata: {name: p}\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "kind"}},
		},
		{
			name: "list items",
			give: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret}\n- " + "apiVersion: kyverno.io/v1\n  kind: ClusterPolicy\n  spec: {foo: 1}\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "items[1].spec.foo"}},
		},
		{
			name: "nan is not json",
			give: head + "spec:\n  rules:\n  - name: r\n    match: {resources: {kinds: [Pod]}}\n    validate: {pattern: {a: .nan}}\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePolicies("test.yaml", []byte(tt.give))
			if got != nil {
				t.Errorf("DecodePolicies() = %v, want nil on error", got)
			}
			if diff := cmp.Diff(tt.want, errorsOf(err)); diff != "" {
				t.Errorf("DecodePolicies() errors mismatch (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

func TestDecodePoliciesErrorContext(t *testing.T) {
	_, err := DecodePolicies("dir/p.yaml", []byte("a: 1\n---\n\n# c\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nspec: {x: 1}\n"))
	var de *DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("DecodePolicies() error = %v, want a *DocumentError", err)
	}
	want := DocumentError{Source: "dir/p.yaml", Index: 2, Line: 5}
	got := DocumentError{Source: de.Source, Index: de.Index, Line: de.Line}
	if got != want {
		t.Errorf("DecodePolicies() error context = %+v, want %+v", got, want)
	}
}

// TestSchemaMatchesTypes checks that every field the schema knows has a Go
// field of a compatible kind, so that what checkSchema accepts decodes.
func TestSchemaMatchesTypes(t *testing.T) {
	for version, s := range policySchemas() {
		var problems []string
		compareSchema(s, reflectTypeOfDocument(), version, &problems)
		for _, p := range problems {
			t.Error(p)
		}
	}
}

func reflectTypeOfDocument() reflect.Type { return reflect.TypeOf(Document{}) }

// compareSchema reports schema properties that have no Go field and types
// that cannot hold what the schema allows.
func compareSchema(s *schemaNode, t reflect.Type, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return
	}
	bad := func(want string) {
		*problems = append(*problems, fmt.Sprintf("%s: schema %s, Go %s", path, want, t))
	}
	switch s.Type {
	case "":
		if !s.Preserve {
			bad("free-form")
		}
	case "object":
		switch t.Kind() {
		case reflect.Map:
			if s.AdditionalProperties != nil {
				compareSchema(s.AdditionalProperties, t.Elem(), path+"{}", problems)
			}
		case reflect.Struct:
			fields := map[string]reflect.Type{}
			collectFields(t, fields)
			for name, p := range s.Properties {
				ft, ok := fields[name]
				if !ok {
					*problems = append(*problems, fmt.Sprintf("%s.%s: no Go field", path, name))
					continue
				}
				compareSchema(p, ft, path+"."+name, problems)
			}
			if s.AdditionalProperties != nil {
				bad("map")
			}
		default:
			bad("object")
		}
	case "array":
		if t.Kind() != reflect.Slice {
			bad("array")
			return
		}
		if s.Items != nil {
			compareSchema(s.Items, t.Elem(), path+"[]", problems)
		}
	case "string":
		if t.Kind() != reflect.String {
			bad("string")
		}
	case "boolean":
		if t.Kind() != reflect.Bool {
			bad("boolean")
		}
	case "integer":
		switch t.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
		default:
			bad("integer")
		}
	default:
		bad(s.Type)
	}
}

func collectFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			collectFields(f.Type, out)
			continue
		}
		out[name] = f.Type
	}
}
