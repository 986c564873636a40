package eval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// TestMutatingPolicyBackground evaluates a MutatingPolicy in a background
// scan as Kyverno's background scanner does (pkg/controllers/report/utils
// scanner.go): a resource the mutation would still change fails with
// "mutation is not applied", one it leaves as it is passes, a match
// condition that does not hold skips; nothing is patched. A policy with
// background disabled is not evaluated.
func TestMutatingPolicyBackground(t *testing.T) {
	const addTeam = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: add-team
spec:
  evaluation:
    background:
      enabled: BACKGROUND
  autogen:
    podControllers:
      controllers: []
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  matchConditions:
  - name: not-skipped
    expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
`
	compile := func(background string) *policy.Policy {
		docs, err := mpol.Policies.Decode("add-team.yaml", []byte(strings.ReplaceAll(addTeam, "BACKGROUND", background)))
		if err != nil || len(docs) != 1 {
			t.Fatalf("mpol.Policies.Decode = %d documents, %v", len(docs), err)
		}
		p, err := policy.CompileMutating(docs[0])
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pod := func(labels map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "shop", "labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		}
	}
	type result struct {
		Rule, Message string
		Status        eval.Status
	}
	tests := []struct {
		name       string
		background string
		labels     map[string]any
		want       []result
	}{
		{"not applied", "true", map[string]any{"app": "x"}, []result{{"", "mutation is not applied", eval.StatusFail}}},
		{"applied", "true", map[string]any{"app": "x", "team": "a"}, []result{{"", "success", eval.StatusPass}}},
		{"match condition", "true", map[string]any{"skip": "y"}, []result{{"", "skip", eval.StatusSkip}}},
		{"background disabled", "false", map[string]any{"app": "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &eval.Request{Object: pod(tt.labels), Operation: "CREATE", Mode: eval.Background}
			resp := eval.New(eval.Options{}).Evaluate(context.Background(), []*policy.Policy{compile(tt.background)}, req)
			var got []result
			for _, r := range resp.Results {
				got = append(got, result{r.Rule, r.Message, r.Status})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
			if resp.Patched != nil || resp.Patch != nil {
				t.Errorf("Evaluate(%s) = patch %s, want none in a background scan", tt.name, resp.Patch)
			}
		})
	}
}
