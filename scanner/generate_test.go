package scanner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

func TestRecordKey(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		give *scanner.PolicyRef
		want string
	}{
		{&scanner.PolicyRef{Name: "default-deny"}, "generate-existing.verdict.io/default-deny"},
		{&scanner.PolicyRef{Namespace: "team", Name: "np"}, "generate-existing.verdict.io/team_np"},
		{&scanner.PolicyRef{Name: long}, "generate-existing.verdict.io/" + long[:46] + "-"},
	}
	for _, tt := range tests {
		got := scanner.RecordKey(tt.give)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("RecordKey(%s) = %q, want %q...", tt.give.Key(), got, tt.want)
		}
		if name := strings.TrimPrefix(got, scanner.RecordPrefix); len(name) > 63 {
			t.Errorf("RecordKey(%s) name part has %d characters, want at most 63", tt.give.Key(), len(name))
		}
	}
	if a, b := scanner.RecordKey(&scanner.PolicyRef{Name: long + "x"}), scanner.RecordKey(&scanner.PolicyRef{Name: long + "y"}); a == b {
		t.Errorf("RecordKey of two long names = %q for both, want different keys", a)
	}
}

// TestGenerateExistingRequest checks what the server answers to the
// replay the scanner sends for an existing trigger.
func TestGenerateExistingRequest(t *testing.T) {
	ts := startServer(t, netpolPolicy, teamLabelPolicy)
	ns := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shop", "uid": "u-1", "labels": map[string]any{"netpol": "default"}},
	}
	req, err := client.NewRequest(ns, client.Background(), client.Policies("default-deny"))
	if err != nil {
		t.Fatal(err)
	}
	// Without the flag, a background scan generates nothing.
	resp, err := ts.client.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetGenerates()) != 0 {
		t.Errorf("Evaluate(background) generates %d resources, want 0", len(resp.GetGenerates()))
	}
	req.GenerateExisting = true
	resp, err = ts.client.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetGenerates()) != 1 {
		t.Fatalf("Evaluate(generate_existing) generates %d resources, want 1", len(resp.GetGenerates()))
	}
	g := resp.GetGenerates()[0]
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name, Namespace string
			Labels          map[string]string
		} `json:"metadata"`
	}
	if err := json.Unmarshal(g.GetResource(), &obj); err != nil {
		t.Fatal(err)
	}
	got := []string{g.GetAction().String(), obj.Kind, obj.Metadata.Namespace + "/" + obj.Metadata.Name,
		obj.Metadata.Labels["kyverno.io/background-gen-rule"], obj.Metadata.Labels["generate.kyverno.io/trigger-uid"]}
	want := []string{"GENERATE_ACTION_CREATE", "NetworkPolicy", "shop/default-deny", "deny-all", "u-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate(generate_existing) intent mismatch (-want +got):\n%s", diff)
	}
	if len(resp.GetResults()) != 1 || resp.GetResults()[0].GetResult() != verdictv1.Result_RESULT_PASS {
		t.Errorf("Evaluate(generate_existing) results = %v, want one pass", resp.GetResults())
	}
}
