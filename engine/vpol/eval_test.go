package vpol_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

const costPolicy = `
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: cost
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  variables:
  - name: v
    expression: %q
  validations:
  - expression: %q
`

// TestCostLimitPerExpression: the runtime cost limit
// (kyvernocel.CostLimit) holds for each expression on its own, a variable
// and each validation, as in Kyverno, which evaluates each with its own
// program run: an expression at the limit passes, one over it errors,
// and a variable and a validation that together cost more than the limit
// pass.
func TestCostLimitPerExpression(t *testing.T) {
	// s.contains('z') costs 2 + ⌈len(s)/10⌉ (Kubernetes' cost of a string
	// traversal), `!` one more: each costs CostLimit with these lengths.
	const (
		containsAtLimit    = (kyvernocel.CostLimit - 2) * 10
		notContainsAtLimit = (kyvernocel.CostLimit - 3) * 10
		overLimit          = "error: operation cancelled: actual cost limit exceeded"
	)
	tests := []struct {
		name           string
		giveLen        int
		giveVariable   string
		giveValidation string
		want           vpol.Result
	}{
		{
			name:    "variable at the limit, validation reading it and more",
			giveLen: containsAtLimit, giveVariable: "object.s.contains('z')",
			giveValidation: "!variables.v && !object.half.contains('z')",
			want:           vpol.Result{Status: vpol.StatusPass, Message: "success"},
		},
		{
			name:    "variable over the limit",
			giveLen: containsAtLimit + 1, giveVariable: "object.s.contains('z')",
			giveValidation: "!variables.v",
			want:           vpol.Result{Status: vpol.StatusError, Message: overLimit, Properties: map[string]string{vpol.PropertyValidationIndex: "0"}},
		},
		{
			name:    "validation at the limit",
			giveLen: notContainsAtLimit, giveVariable: "0",
			giveValidation: "!object.s.contains('z')",
			want:           vpol.Result{Status: vpol.StatusPass, Message: "success"},
		},
		{
			name:    "validation over the limit",
			giveLen: notContainsAtLimit + 1, giveVariable: "0",
			giveValidation: "!object.s.contains('z')",
			want:           vpol.Result{Status: vpol.StatusError, Message: overLimit, Properties: map[string]string{vpol.PropertyValidationIndex: "0"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := vpol.Decode(tt.name, fmt.Appendf(nil, costPolicy, tt.giveVariable, tt.giveValidation))
			if err != nil {
				t.Fatal(err)
			}
			p, err := vpol.Compile(docs[0])
			if err != nil {
				t.Fatal(err)
			}
			in := vpol.NewInput(vpol.Request{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "cm", "namespace": "ns"},
				"s":        strings.Repeat("a", tt.giveLen),
				"half":     strings.Repeat("a", tt.giveLen/2),
			}})
			got := p.Evaluate(t.Context(), in, nil)
			if diff := cmp.Diff([]vpol.Result{tt.want}, got); diff != "" {
				t.Errorf("Evaluate(%d characters) (-want +got):\n%s", tt.giveLen, diff)
			}
		})
	}
}

// cancelingResources cancels the evaluation's context when an expression
// lists resources.
type cancelingResources struct{ cancel context.CancelFunc }

func (c cancelingResources) GetResource(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, engine.ErrNotFound
}

func (c cancelingResources) ListResources(context.Context, string, string, string, map[string]string) (map[string]any, error) {
	c.cancel()
	return map[string]any{"items": []any{}}, nil
}

func (c cancelingResources) PostResource(_ context.Context, _, _, _ string, data map[string]any) (map[string]any, error) {
	return data, nil
}

// TestEvaluationStopsWhenContextIsDone: an expression, a variable's too,
// stops at its next interrupt check once the evaluation's context is done
// (here cancelled by the data source of resource.List, before an all()
// over 300,000 items that takes minutes otherwise).
func TestEvaluationStopsWhenContextIsDone(t *testing.T) {
	const (
		slow        = "size(resource.List('v1', 'configmaps', 'ns').items) == 0 && object.items.all(i, true)"
		interrupted = "error: operation interrupted: context canceled"
	)
	tests := []struct {
		name           string
		giveVariable   string
		giveValidation string
		want           vpol.Result
	}{
		{
			name:         "validation",
			giveVariable: "0", giveValidation: slow,
			want: vpol.Result{Status: vpol.StatusError, Message: interrupted, Properties: map[string]string{vpol.PropertyValidationIndex: "0"}},
		},
		{
			name:         "variable",
			giveVariable: slow, giveValidation: "variables.v",
			want: vpol.Result{Status: vpol.StatusError, Message: interrupted, Properties: map[string]string{vpol.PropertyValidationIndex: "0"}},
		},
	}
	items := make([]any, 300_000)
	for i := range items {
		items[i] = int64(i)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := vpol.Decode(tt.name, fmt.Appendf(nil, costPolicy, tt.giveVariable, tt.giveValidation))
			if err != nil {
				t.Fatal(err)
			}
			p, err := vpol.Compile(docs[0])
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			in := vpol.NewInput(vpol.Request{
				Object: map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "cm", "namespace": "ns"},
					"items":    items,
				},
				Sources: kyvernocel.Sources{Resources: cancelingResources{cancel: cancel}},
			})
			got := p.Evaluate(ctx, in, nil)
			if diff := cmp.Diff([]vpol.Result{tt.want}, got); diff != "" {
				t.Errorf("Evaluate(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestMatchConditions: Kyverno's match of its CEL policies (the same in
// its vpol, ivpol, mpol, gpol and dpol compilers): a false condition
// decides; otherwise the errors, a value that is not a bool in CEL's
// conversion words (utils.ConvertToNative[bool]), joined with "; ", or
// false under failurePolicy Ignore. Compile refuses a condition whose
// type is not bool, so the conditions here compile without that check.
func TestMatchConditions(t *testing.T) {
	tests := []struct {
		name    string
		conds   []string
		ignore  bool
		want    bool
		wantErr string
	}{
		{name: "all true", conds: []string{"object.t", "true"}, want: true},
		{name: "false decides over an error", conds: []string{"object.s", "object.f"}, want: false},
		{name: "not a bool", conds: []string{"object.s", "object.t"}, wantErr: "unsupported native conversion from string to 'bool'"},
		{name: "errors joined", conds: []string{"object.s", "object.missing"}, wantErr: "unsupported native conversion from string to 'bool'; no such key: missing"},
		{name: "ignore", conds: []string{"object.s"}, ignore: true, want: false},
	}
	env, err := kyvernocel.NewEnv("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			progs := make([]cel.Program, len(tt.conds))
			for i, c := range tt.conds {
				if progs[i], _, err = env.Compile(c); err != nil {
					t.Fatal(err)
				}
			}
			act := &kyvernocel.Activation{Object: map[string]any{"t": true, "f": false, "s": "yes"}}
			got, err := vpol.MatchConditions(context.Background(), act, progs, tt.ignore)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("MatchConditions(%q, ignore %v) = %v, %q, want %v, %q", tt.conds, tt.ignore, got, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}
