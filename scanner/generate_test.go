package scanner_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

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

// TestGeneratorFailed: the failures of generate and mutateExisting rules
// go to GeneratorOptions.Failed, naming the policy (its kind from the
// answer), the rule and the object Kyverno's event is about.
func TestGeneratorFailed(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	var got []scanner.Failure
	gen, err := scanner.NewGenerator(dyn, mapper, scanner.GeneratorOptions{Failed: func(f scanner.Failure) {
		f.Err = errors.New(f.Err.Error()) // compared by text
		got = append(got, f)
	}})
	if err != nil {
		t.Fatal(err)
	}
	trigger := &scanner.Resource{APIVersion: "v1", Kind: "Namespace", Name: "shop"}
	widget := []byte(`{"apiVersion":"x.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"shop"}}`)
	tests := []struct {
		name  string
		apply func() error
		want  []scanner.Failure
	}{
		{
			name: "generate: a failure of the engine, and a resource that cannot be written",
			apply: func() error {
				_, err := gen.Apply(context.Background(), trigger, nil, &verdictv1.EvaluateResponse{
					Policies:         []*verdictv1.PolicyVersion{{Kind: "GeneratingPolicy", Name: "gen"}},
					GenerateFailures: []*verdictv1.GenerateFailure{{Policy: "gen", Rule: "gen", Message: "variable not found"}},
					Generates:        []*verdictv1.GenerateIntent{{Policy: "add-widget", Rule: "w", Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: widget}},
				})
				return err
			},
			want: []scanner.Failure{
				{PolicyKind: "GeneratingPolicy", PolicyName: "gen", Rule: "gen", APIVersion: "v1", Kind: "Namespace", Name: "shop", Err: errors.New("variable not found")},
				{PolicyKind: "ClusterPolicy", PolicyName: "add-widget", Rule: "w", APIVersion: "v1", Kind: "Namespace", Name: "shop", Err: errors.New(`x.io/v1 Widget: no matches for kind "Widget" in version "x.io/v1"`)},
			},
		},
		{
			name: "mutateExisting: an error result (about the trigger), a target that cannot be patched (about the target)",
			apply: func() error {
				_, err := gen.ApplyTargets(context.Background(), trigger, nil, &verdictv1.EvaluateResponse{
					Results:       []*verdictv1.RuleResult{{Policy: "label", PolicyNamespace: "shop", Rule: "add", Type: verdictv1.RuleType_RULE_TYPE_MUTATION, Result: verdictv1.Result_RESULT_ERROR, Message: "target not found"}},
					TargetPatches: []*verdictv1.TargetPatch{{Policy: "label", PolicyNamespace: "shop", Rule: "add", Target: widget, JsonPatch: []byte(`[{"op":"add","path":"/x","value":1}]`)}},
				})
				return err
			},
			want: []scanner.Failure{
				{Mutate: true, PolicyKind: "Policy", PolicyNamespace: "shop", PolicyName: "label", Rule: "add", APIVersion: "v1", Kind: "Namespace", Name: "shop",
					Err: errors.New("failed to mutate existing resource, rule add, response error: target not found")},
				{Mutate: true, PolicyKind: "Policy", PolicyNamespace: "shop", PolicyName: "label", Rule: "add", APIVersion: "x.io/v1", Kind: "Widget", Namespace: "shop", Name: "w",
					Err: errors.New(`x.io/v1 Widget: no matches for kind "Widget" in version "x.io/v1"`)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			if err := tt.apply(); err == nil {
				t.Error("apply = nil error, want the failures joined")
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
				t.Errorf("Failed calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
