package kyverno

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

func TestSplitDocuments(t *testing.T) {
	pod := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name}}
	}
	tests := []struct {
		name string
		give string
		want []Object
	}{
		{
			name: "one document",
			give: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n",
			want: []Object{{Line: 1, Value: pod("a")}},
		},
		{
			name: "separators, comments and empty documents",
			give: "# header\n---\n\n---\n# c\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n--- # next\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n---\n---\n",
			want: []Object{{Line: 6, Value: pod("a")}, {Line: 10, Value: pod("b")}},
		},
		{
			name: "no final line break",
			give: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}",
			want: []Object{{Line: 1, Value: pod("a")}},
		},
		{
			name: "json object",
			give: "\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"a\"}\n}\n",
			want: []Object{{Line: 2, Value: pod("a")}},
		},
		{
			name: "json values back to back",
			give: "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}\n\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"b\"}}\n",
			want: []Object{{Line: 1, Value: pod("a")}, {Line: 3, Value: pod("b")}},
		},
		{
			name: "json numbers as yaml reads them",
			give: "{\"a\": 1, \"b\": -0, \"c\": 1.5e3, \"d\": 1e400}",
			want: []Object{{Line: 1, Value: map[string]any{"a": 1.0, "b": 0.0, "c": 1500.0, "d": "1e400"}}},
		},
		{
			name: "list is flattened",
			give: "a: 1\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n",
			want: []Object{{Line: 1, Value: map[string]any{"a": 1.0}}, {Line: 3, Value: pod("a")}, {Line: 3, Value: pod("b")}},
		},
		{
			name: "empty list",
			give: "apiVersion: v1\nkind: List\nitems: []\n",
			want: []Object{},
		},
		{
			name: "yaml 1.1 scalars and repeated keys",
			give: "a: yes\nb: off\nc: 0x10\nd: '1'\ne: 1\ne: 2\nf: ~\n",
			want: []Object{{Line: 1, Value: map[string]any{"a": true, "b": false, "c": 16.0, "d": "1", "e": 2.0, "f": nil}}},
		},
		{
			name: "go-yaml for what the fast parser leaves",
			give: "base: &b {x: 1}\ncopy: *b\nyes: key\n",
			want: []Object{{Line: 1, Value: map[string]any{"base": map[string]any{"x": 1.0}, "copy": map[string]any{"x": 1.0}, "true": "key"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitDocuments("r.yaml", []byte(tt.give))
			if err != nil {
				t.Fatalf("SplitDocuments(%q) error = %v", tt.give, err)
			}
			if len(tt.want) == 0 && len(got) == 0 {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitDocuments(%q) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestSplitDocumentsErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []wantErr
	}{
		{
			name: "invalid separator",
			give: "a: 1\n--- !tag\nb: 2\n",
			want: []wantErr{{Code: engine.CodeDecode}},
		},
		{
			name: "syntax errors of every document",
			give: "a: [\n---\nb: 1\n---\nc: d: e\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}, {3, 5, engine.CodeDecode, ""}},
		},
		{
			name: "not an object",
			give: "- a\n---\nplain\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}, {2, 3, engine.CodeDecode, ""}},
		},
		{
			name: "list items",
			give: "apiVersion: v1\nkind: List\nitems:\n- a\n- {b: 1}\n- [c]\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "items[0]"}, {1, 1, engine.CodeDecode, "items[2]"}},
		},
		{
			name: "list items not a list",
			give: "apiVersion: v1\nkind: List\nitems: a\n",
			want: []wantErr{{1, 1, engine.CodeDecode, "items"}},
		},
		{
			name: "infinity",
			give: "a: .inf\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}},
		},
		{
			name: "key that is not a string",
			give: "? [a]\n: b\n",
			want: []wantErr{{1, 1, engine.CodeDecode, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitDocuments("r.yaml", []byte(tt.give))
			if got != nil {
				t.Errorf("SplitDocuments(%q) = %v, want nil on error", tt.give, got)
			}
			if diff := cmp.Diff(tt.want, errorsOf(err)); diff != "" {
				t.Errorf("SplitDocuments(%q) errors mismatch (-want +got):\n%s\nerror: %v", tt.give, diff, err)
			}
		})
	}
}

func TestSplitDocumentsErrorLines(t *testing.T) {
	// go-yaml's line numbers are shifted to lines of the whole input.
	_, err := SplitDocuments("r.yaml", []byte("a: 1\n---\nb: 1\nc: [\n"))
	want := "r.yaml: document 2 (line 3): line 4: did not find expected node content"
	if err == nil || err.Error() != want {
		t.Errorf("SplitDocuments() error = %v, want %s", err, want)
	}
}

func FuzzDecodePolicies(f *testing.F) {
	f.Add([]byte("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:" + podRule))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: kyverno.io/v2beta1, kind: Policy, spec: {rules: [{name: a, match: {any: [{resources: {kinds: [Pod]}}]}}]}}\n"))
	f.Add([]byte(`{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "spec": {"rules": [{"validate": {"foreach": [{"foreach": [{"list": 1}]}]}}]}}`))
	for _, s := range yamlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := DecodePolicies("fuzz.yaml", data)
		if err != nil && docs != nil {
			t.Fatalf("DecodePolicies(%q) returned documents and an error", data)
		}
		if _, err := SplitDocuments("fuzz.yaml", data); err != nil && len(engine.As(err)) == 0 {
			t.Fatalf("SplitDocuments(%q) error %v holds no *engine.Error", data, err)
		}
	})
}
