package pattern

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
)

// TestResolveReferences pins $(...) resolution; each expectation is what
// Kyverno v1.19.0's variables.SubstituteAll returns for the same document.
func TestResolveReferences(t *testing.T) {
	tests := []struct {
		name    string
		giveDoc string
		want    string
	}{
		{
			name:    "relative with operator",
			giveDoc: `{"data": {"req": "$(<=./../lim)", "lim": "2Gi"}}`,
			want:    `{"data": {"req": "<=2Gi", "lim": "2Gi"}}`,
		},
		{
			name:    "docs memory example",
			giveDoc: `{"spec": {"containers": [{"name": "*", "resources": {"requests": {"memory": "$(<=./../../limits/memory)"}, "limits": {"memory": "2048Mi"}}}]}}`,
			want:    `{"spec": {"containers": [{"name": "*", "resources": {"requests": {"memory": "<=2048Mi"}, "limits": {"memory": "2048Mi"}}}]}}`,
		},
		{
			name:    "absolute",
			giveDoc: `{"spec": {"a": "$(/spec/b)", "b": "x*"}}`,
			want:    `{"spec": {"a": "x*", "b": "x*"}}`,
		},
		{
			name:    "integer with operator",
			giveDoc: `{"spec": {"a": "$(>=./../b)", "b": 2}}`,
			want:    `{"spec": {"a": ">=2", "b": 2}}`,
		},
		{
			name:    "float with operator",
			giveDoc: `{"spec": {"a": "$(>=./../b)", "b": 2.5}}`,
			want:    `{"spec": {"a": ">=2.500000", "b": 2.5}}`,
		},
		{
			name:    "empty parentheses are not a reference",
			giveDoc: `{"spec": {"a": "$()"}}`,
			want:    `{"spec": {"a": "$()"}}`,
		},
		{
			name:    "escaped reference loses its backslash",
			giveDoc: `{"spec": {"a": "\\$(./../b)", "b": "v"}}`,
			want:    `{"spec": {"a": "$(./../b)", "b": "v"}}`,
		},
		{
			name:    "anchors in the target are ignored",
			giveDoc: `{"spec": {"a": "$(./../b)", "(b)": "v"}}`,
			want:    `{"spec": {"a": "v", "(b)": "v"}}`,
		},
		{
			name:    "inside text, two references",
			giveDoc: `{"spec": {"a": "pre-$(./../b)-post $(./../c)", "b": "v", "c": "w"}}`,
			want:    `{"spec": {"a": "pre-v-post w", "b": "v", "c": "w"}}`,
		},
		{
			name:    "greedy match without spaces",
			giveDoc: `{"spec": {"a": "$(./../b)-$(./../b)", "b": "v"}}`,
			want:    `{"spec": {"a": "v", "b": "v"}}`,
		},
		{
			name:    "a map target gives its key",
			giveDoc: `{"spec": {"a": "$(./../b)", "b": {"k": "v"}}}`,
			want:    `{"spec": {"a": "k", "b": {"k": "v"}}}`,
		},
		{
			name:    "inside a list",
			giveDoc: `{"spec": {"c": [{"a": "$(./../b)", "b": "v*"}]}}`,
			want:    `{"spec": {"c": [{"a": "v*", "b": "v*"}]}}`,
		},
		{
			name:    "in a key, relative to the map",
			giveDoc: `{"spec": {"$(./b)": "1", "b": "x"}}`,
			want:    `{"spec": {"x": "1", "b": "x"}}`,
		},
		{
			name:    "renamed key wins over the key it collides with",
			giveDoc: `{"a": {"b": {"$(./../b)": "z", "b": "q"}}}`,
			want:    `{"a": {"b": {"b": "z"}}}`,
		},
		{
			name:    "anyPattern document",
			giveDoc: `[{"spec": {"a": "$(/1/spec/b)"}}, {"spec": {"b": "q"}}]`,
			want:    `[{"spec": {"a": "q"}}, {"spec": {"b": "q"}}]`,
		},
		{
			name:    "slash in a key is escaped",
			giveDoc: `{"a/b": {"c": "$(./../d)", "d": "v"}}`,
			want:    `{"a/b": {"c": "v", "d": "v"}}`,
		},
		{
			name:    "no reference",
			giveDoc: `{"spec": {"a": "$ (x)", "b": 1}}`,
			want:    `{"spec": {"a": "$ (x)", "b": 1}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveReferences(decode(t, tt.giveDoc))
			if err != nil {
				t.Fatalf("ResolveReferences(%s) = %v", tt.giveDoc, err)
			}
			if diff := cmp.Diff(decode(t, tt.want), got); diff != "" {
				t.Errorf("ResolveReferences(%s) mismatch (-want +got):\n%s", tt.giveDoc, diff)
			}
		})
	}
}

func TestResolveReferencesErrors(t *testing.T) {
	tests := []struct {
		name    string
		giveDoc string
		want    *engine.Error
	}{
		{
			name:    "missing target",
			giveDoc: `{"spec": {"a": "$(/spec/zz)"}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "got nil resolved variable $(/spec/zz) at path /spec/a: <nil>"},
		},
		{
			name:    "number without operator",
			giveDoc: `{"spec": {"a": "$(./../b)", "b": 2}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "NotResolvedReferenceErr,reference $(./../b) not resolved at path /spec/a"},
		},
		{
			name:    "bool with operator",
			giveDoc: `{"spec": {"a": "$(!./../b)", "b": true}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "failed to resolve $(!./../b) at path /spec/a: incorrect expression: operator ! does not match with value true"},
		},
		{
			name:    "null with operator",
			giveDoc: `{"spec": {"a": "$(>./../b)", "b": null}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "failed to resolve $(>./../b) at path /spec/a: incorrect expression: operator > does not match with value <nil>"},
		},
		{
			name:    "null target",
			giveDoc: `{"spec": {"a": "$(./../b)", "b": null}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "got nil resolved variable $(./../b) at path /spec/a: <nil>"},
		},
		{
			name:    "operator without path",
			giveDoc: `{"spec": {"a": "$(<=)"}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "failed to resolve $(<=) at path /spec/a: expected path, found empty reference"},
		},
		{
			name:    "anchor in the source path is kept",
			giveDoc: `{"spec": {"(c)": {"a": "$(./../b)", "b": "v"}}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.(c).a", Message: "got nil resolved variable $(./../b) at path /spec/(c)/a: <nil>"},
		},
		{
			name:    "preceding multibyte character is cut",
			giveDoc: `{"spec": {"a": "é$(./../b)", "b": "v"}}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "spec.a", Message: "got nil resolved variable \xa9$(./../b) at path /spec/a: <nil>"},
		},
		{
			name:    "root string",
			giveDoc: `"$(/)"`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "", Message: "got nil resolved variable $(/) at path : <nil>"},
		},
		{
			name:    "in a list",
			giveDoc: `{"a": [{"b": "$(/x)"}]}`,
			want:    &engine.Error{Code: engine.CodeVariableNotResolved, Path: "a[0].b", Message: "got nil resolved variable $(/x) at path /a/0/b: <nil>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveReferences(decode(t, tt.giveDoc))
			got, ok := err.(*engine.Error)
			if !ok {
				t.Fatalf("ResolveReferences(%s) = %v, want *engine.Error", tt.giveDoc, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolveReferences(%s) error mismatch (-want +got):\n%s", tt.giveDoc, diff)
			}
		})
	}
}

// TestCheckReferences pins Kyverno's policy validation of references, which
// resolves them against the whole rule (checked with the reference kyverno
// CLI, which skips such policies with "policy contains invalid variables").
func TestCheckReferences(t *testing.T) {
	tests := []struct {
		name    string
		giveDoc string
		giveAt  string
		want    []errorAt
	}{
		{
			name:    "relative resolves",
			giveDoc: `{"data": {"req": "$(<=./../lim)", "lim": "2Gi"}}`,
			giveAt:  "/validate/pattern",
		},
		{
			name:    "absolute from the pattern root fails",
			giveDoc: `{"spec": {"a": "$(/spec/b)", "b": "x*"}}`,
			giveAt:  "/validate/pattern",
			want:    []errorAt{{engine.CodeInvalidVariable, "spec.a"}},
		},
		{
			name:    "absolute from the rule root resolves",
			giveDoc: `{"spec": {"a": "$(/validate/pattern/spec/b)", "b": "x*"}}`,
			giveAt:  "/validate/pattern/",
		},
		{
			name:    "anyPattern absolute fails",
			giveDoc: `[{"spec": {"a": "$(/1/spec/b)"}}, {"spec": {"b": "q"}}]`,
			giveAt:  "/validate/anyPattern",
			want:    []errorAt{{engine.CodeInvalidVariable, "[0].spec.a"}},
		},
		{
			name:    "number without operator fails",
			giveDoc: `{"spec": {"a": "$(./../b)", "b": 2}}`,
			giveAt:  "/validate/pattern",
			want:    []errorAt{{engine.CodeInvalidVariable, "spec.a"}},
		},
		{
			name:    "no reference",
			giveDoc: `{"spec": {"a": "b"}}`,
			giveAt:  "/validate/pattern",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckReferences(decode(t, tt.giveDoc), tt.giveAt)
			if diff := cmp.Diff(tt.want, errorsAt(err)); diff != "" {
				t.Errorf("CheckReferences(%s, %q) errors mismatch (-want +got):\n%s", tt.giveDoc, tt.giveAt, diff)
			}
		})
	}
}

func TestResolveReferencesKeepsInput(t *testing.T) {
	give := decode(t, `{"spec": {"a": "$(./../b)", "b": "v"}}`)
	if _, err := ResolveReferences(give); err != nil {
		t.Fatal(err)
	}
	want := decode(t, `{"spec": {"a": "$(./../b)", "b": "v"}}`)
	if diff := cmp.Diff(want, give); diff != "" {
		t.Errorf("ResolveReferences changed its input (-want +got):\n%s", diff)
	}
}
