package variables_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/variables"
)

func TestSetPath(t *testing.T) {
	tests := []struct {
		name string
		root any
		path []string
		want any
	}{
		{name: "no path", root: map[string]any{"a": 1}, path: nil, want: "v"},
		{name: "missing root", root: nil, path: []string{"data", "key"}, want: map[string]any{"data": map[string]any{"key": "v"}}},
		{name: "not a map", root: "text", path: []string{"key"}, want: map[string]any{"key": "v"}},
		{name: "kept siblings", root: map[string]any{"data": map[string]any{"other": 1}, "kind": "ConfigMap"}, path: []string{"data", "key"},
			want: map[string]any{"data": map[string]any{"other": 1, "key": "v"}, "kind": "ConfigMap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cmp.Diff(nil, tt.root)
			got := variables.SetPath(tt.root, tt.path, "v")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SetPath(%v, %q) (-want +got):\n%s", tt.root, tt.path, diff)
			}
			if after := cmp.Diff(nil, tt.root); after != before {
				t.Errorf("SetPath(%v, %q) changed its root", tt.root, tt.path)
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		want    []string
		wantErr bool
	}{
		{name: "one key", give: "cm", want: []string{"cm"}},
		{name: "dotted", give: "request.object.metadata.name", want: []string{"request", "object", "metadata", "name"}},
		{name: "quoted key with dots", give: `request.object.metadata.annotations."example.com/team"`, want: []string{"request", "object", "metadata", "annotations", "example.com/team"}},
		{name: "doubled quote in a quoted key", give: `a."b""c"`, want: []string{"a", `b"c`}},
		{name: "empty keys", give: "a..b.", want: []string{"a", "", "b", ""}},
		{name: "first line only", give: "a.b\nc.d", want: []string{"a", "b"}},
		{name: "empty", give: "", wantErr: true},
		{name: "quote inside a key", give: `a.b"c`, wantErr: true},
		{name: "unterminated quote", give: `a."b.c`, wantErr: true},
		{name: "text after a quoted key", give: `"a"b.c`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := variables.SplitName(tt.give)
			if (err != nil) != tt.wantErr {
				t.Fatalf("SplitName(%q) error = %v, want error %v", tt.give, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitName(%q) (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
