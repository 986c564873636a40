package kyverno

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nested returns a value whose maps nest depth levels deep.
func nested(depth int) any {
	var v any = "leaf"
	for i := 0; i < depth; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

// TestDecodePolicyValue checks that decoding a document's values gives what
// DecodePolicies gives for the same document written as JSON: the same
// Documents, and the same errors (document, line, code and path).
func TestDecodePolicyValue(t *testing.T) {
	policy := func(spec map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
			"metadata": map[string]any{"name": "p", "annotations": map[string]any{"a": "<b> & c"}},
			"spec":     spec,
		}
	}
	rule := func(extra map[string]any) map[string]any {
		r := map[string]any{
			"name":  "r",
			"match": map[string]any{"any": []any{map[string]any{"resources": map[string]any{"kinds": []any{"Pod"}}}}},
			"validate": map[string]any{"message": "m\n\t\u2028", "pattern": map[string]any{
				"spec": map[string]any{"replicas": math.Copysign(0, -1), "limit": 1.5e300, "n": float64(1 << 60)},
			}},
		}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	tests := []struct {
		name    string
		v       any
		wantErr bool
	}{
		{"policy", policy(map[string]any{"rules": []any{rule(nil)}, "background": false}), false},
		{"unknown field", policy(map[string]any{"rules": []any{rule(map[string]any{"validat": 1.0})}}), true},
		{"wrong type", policy(map[string]any{"rules": "r"}), true},
		{"too deep", policy(map[string]any{"rules": []any{rule(map[string]any{"x": nested(MaxDocumentDepth)})}}), true},
		{"at the depth limit", map[string]any{"apiVersion": "example.com/v1", "kind": "Thing", "data": nested(MaxDocumentDepth - 1)}, false},
		{"over the depth limit", map[string]any{"apiVersion": "example.com/v1", "kind": "Thing", "data": nested(MaxDocumentDepth)}, true},
		{"not a policy", map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, true},
		{"custom resource", map[string]any{"apiVersion": "example.com/v1", "kind": "Thing"}, false},
		{"no kind", map[string]any{"apiVersion": 1.0}, true},
		{"list", map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{
			policy(map[string]any{"rules": []any{rule(nil)}}),
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		}}, false},
		{"not a map", []any{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := DecodePolicies("src", raw)
			got, gotErr := DecodePolicyValue("src", tt.v)
			if (gotErr != nil) != tt.wantErr {
				t.Errorf("DecodePolicyValue(%s) error = %v, want an error: %v", tt.name, gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodePolicyValue(%s) documents differ from DecodePolicies of its JSON (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(errorsOf(wantErr), errorsOf(gotErr)); diff != "" {
				t.Errorf("DecodePolicyValue(%s) errors differ from DecodePolicies of its JSON (-want +got):\n%s", tt.name, diff)
			}
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Errorf("DecodePolicyValue(%s) = %v, want %v", tt.name, gotErr, wantErr)
			}
		})
	}
}

// TestDecodePolicyValueCopies checks that the Documents do not share the
// caller's maps.
func TestDecodePolicyValueCopies(t *testing.T) {
	pattern := map[string]any{"spec": "x"}
	v := map[string]any{
		"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"rules": []any{map[string]any{
			"name":     "r",
			"match":    map[string]any{"any": []any{map[string]any{"resources": map[string]any{"kinds": []any{"Pod"}}}}},
			"validate": map[string]any{"pattern": pattern},
		}}},
	}
	docs, err := DecodePolicyValue("src", v)
	if err != nil || len(docs) != 1 {
		t.Fatalf("DecodePolicyValue(policy) = %d documents, %v, want 1, nil", len(docs), err)
	}
	pattern["spec"] = "changed"
	got := docs[0].Spec.Rules[0].Validate.Pattern
	if diff := cmp.Diff(map[string]any{"spec": "x"}, got); diff != "" {
		t.Errorf("DecodePolicyValue(policy) pattern after the caller changed its map (-want +got):\n%s", diff)
	}
}

// TestParseDocument checks ParseDocument against go-yaml v2 (parseSlow,
// strict) on documents of the fast subset, and that it declines the
// others.
func TestParseDocument(t *testing.T) {
	tests := []struct {
		name   string
		give   string
		wantOK bool
	}{
		{"mapping", "a: b\nc: [1, 'x']\nd:\n  e: true\n  f: ~\n", true},
		{"block scalar", "a: |\n  x\n  y\n", true},
		{"empty", "", true},
		{"repeated key", "a: b\na: c\n", false},
		{"document marker", "---\na: b\n", false},
		{"two documents", "a: b\n---\nc: d\n", false},
		{"directive", "%YAML 1.1\n---\na: b\n", false},
		{"anchor", "a: &x b\nc: *x\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseDocument(tt.give)
			if ok != tt.wantOK {
				t.Fatalf("ParseDocument(%q) ok = %t, want %t", tt.give, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			want, err := parseSlow(chunk{data: tt.give, first: 1, line: 1}, true)
			if err != nil {
				t.Fatalf("parseSlow(%q) = %v", tt.give, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseDocument(%q) differs from go-yaml (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
