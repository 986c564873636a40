package variables

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDocumentStaticAt(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		path   []string
		want   any
		wantOK bool
	}{
		{"static document", `{"kind": "NetworkPolicy", "name": "x"}`, []string{"kind"}, "NetworkPolicy", true},
		{"static field beside a variable", `{"kind": "ConfigMap", "namespace": "{{request.object.metadata.name}}"}`, []string{"kind"}, "ConfigMap", true},
		{"variable field", `{"kind": "{{request.object.kind}}"}`, []string{"kind"}, nil, false},
		{"field holding a variable in text", `{"kind": "Config{{request.object.kind}}"}`, []string{"kind"}, nil, false},
		{"escaped braces are static", `{"kind": "\\{{x}}"}`, []string{"kind"}, "{{x}}", true},
		{"absent field", `{"name": "{{request.object.metadata.name}}"}`, []string{"kind"}, nil, true},
		{"absent field of a static document", `{"name": "x"}`, []string{"kind"}, nil, true},
		{"key with a variable", `{"{{request.object.kind}}": "x", "kind": "Secret"}`, []string{"kind"}, nil, false},
		{"nested static list", `{"cloneList": {"kinds": ["v1/Secret", "ConfigMap"], "namespace": "{{request.namespace}}"}}`, []string{"cloneList", "kinds"}, []any{"v1/Secret", "ConfigMap"}, true},
		{"nested list with a variable", `{"cloneList": {"kinds": ["v1/Secret", "{{request.object.kind}}"]}}`, []string{"cloneList", "kinds"}, nil, false},
		{"path through a list", `{"a": ["{{x}}"]}`, []string{"a", "b"}, nil, false},
		{"path through a string", `{"a": "{{x}}", "b": "c"}`, []string{"b", "c"}, nil, true},
		{"path through a template", `{"a": "{{x}}"}`, []string{"a", "b"}, nil, false},
		{"root", `{"a": "b"}`, nil, map[string]any{"a": "b"}, true},
		{"root with a variable", `{"a": "{{x}}"}`, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument(decode(t, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := d.StaticAt(tt.path...)
			if ok != tt.wantOK {
				t.Fatalf("StaticAt(%q) ok = %v, want %v", tt.path, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("StaticAt(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
