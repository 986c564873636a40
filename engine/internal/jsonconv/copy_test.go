package jsonconv_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
)

func TestCopy(t *testing.T) {
	tests := []struct {
		name string
		give func() any
	}{
		{name: "scalar", give: func() any { return "a" }},
		{name: "nil", give: func() any { return nil }},
		{name: "nested", give: func() any {
			return map[string]any{"a": []any{map[string]any{"b": int64(1)}, 2.5, nil}, "c": true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.give()
			got := jsonconv.Copy(v)
			if diff := cmp.Diff(tt.give(), got); diff != "" {
				t.Fatalf("Copy(%v) (-want +got):\n%s", v, diff)
			}
			if m, ok := got.(map[string]any); ok {
				m["a"].([]any)[0].(map[string]any)["b"] = "changed"
				m["c"] = false
			}
			if diff := cmp.Diff(tt.give(), v); diff != "" {
				t.Errorf("Copy(%v): changing the copy changed the value (-want +got):\n%s", v, diff)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		give []string
		want []any
	}{
		{give: nil, want: []any{}},
		{give: []string{}, want: []any{}},
		{give: []string{"a", "", "b"}, want: []any{"a", "", "b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, jsonconv.Strings(tt.give)); diff != "" {
			t.Errorf("Strings(%q) mismatch (-want +got):\n%s", tt.give, diff)
		}
	}
}
