package kyverno

import (
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

// deepPolicy is a ClusterPolicy whose validate.pattern nests maps n deep
// below the pattern (the document itself is n+6 deep).
func deepPolicy(n int) string {
	return "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n" +
		"  - {name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {pattern: " +
		strings.Repeat("{a: ", n) + "x" + strings.Repeat("}", n) + "}}\n"
}

// The document is spec (1), rules (2), the rule (3), validate (4) and the
// pattern (5) nesting the maps below.
const patternLevels = 5

func TestDecodePoliciesDepth(t *testing.T) {
	if _, err := DecodePolicies("at.yaml", []byte(deepPolicy(MaxDocumentDepth-patternLevels))); err != nil {
		t.Errorf("DecodePolicies(%d deep) = %v, want no error", MaxDocumentDepth, err)
	}
	tests := []struct {
		name  string
		depth int
	}{
		{name: "one beyond the limit", depth: MaxDocumentDepth - patternLevels + 1},
		{name: "9,000 deep", depth: 9000},
	}
	wantPath := "spec.rules[0].validate.pattern" + strings.Repeat(".a", maxDepthPath-patternLevels) + "..."
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := DecodePolicies("deep.yaml", []byte(deepPolicy(tt.depth)))
			runtime.ReadMemStats(&after)
			want := []wantErr{{Index: 1, Line: 1, Code: engine.CodeDecode, Path: wantPath}}
			if diff := cmp.Diff(want, errorsOf(err)); diff != "" {
				t.Errorf("DecodePolicies(%d deep) errors mismatch (-want +got):\n%s", tt.depth, diff)
			}
			if !strings.Contains(err.Error(), "MaxDocumentDepth") {
				t.Errorf("DecodePolicies(%d deep) = %q, want the limit named", tt.depth, err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
				t.Errorf("DecodePolicies(%d deep) allocated %d MiB, want at most 64", tt.depth, got>>20)
			}
		})
	}
}

func TestDecodeExceptionsDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDocumentDepth) + strings.Repeat("]", MaxDocumentDepth)
	y := "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: e, namespace: n}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}}]}\n  conditions: {any: [{key: a, operator: In, value: " + deep + "}]}\n"
	_, err := DecodeExceptions("deep.yaml", []byte(y))
	want := []wantErr{{Index: 1, Line: 1, Code: engine.CodeDecode, Path: "spec.conditions.any[0].value" + strings.Repeat("[0]", maxDepthPath-5) + "..."}}
	if diff := cmp.Diff(want, errorsOf(err)); diff != "" {
		t.Errorf("DecodeExceptions(%d deep) errors mismatch (-want +got):\n%s", MaxDocumentDepth+4, diff)
	}
}
