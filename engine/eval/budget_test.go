package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// hostilePod is a Pod with n containers, named c0..c(n-1), each with image.
func hostilePod(n int, image string) map[string]any {
	containers := make([]any, n)
	for i := range containers {
		containers[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": image}
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "p", "namespace": "default"},
		"spec":       map[string]any{"containers": containers},
	}
}

// nestedForeachPolicy compares every container with every other one: n²
// elements for a Pod of n containers.
const nestedForeachPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: pairs}
spec:
  rules:
  - name: pairs
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach:
      - list: request.object.spec.containers
        foreach:
        - list: request.object.spec.containers
          deny:
            conditions:
              any:
              - key: "{{ element.name }}"
                operator: Equals
                value: "never-{{ element0.name }}"
`

// anyInPolicy compares two lists of the resource element by element.
const anyInPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: names-images}
spec:
  rules:
  - name: names-images
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      deny:
        conditions:
          any:
          - key: "{{ request.object.spec.containers[].name }}"
            operator: AnyIn
            value: "{{ request.object.spec.containers[].image }}"
`

// envPod is a Pod with one container with n environment variables.
func envPod(n int) map[string]any {
	env := make([]any, n)
	for i := range env {
		env[i] = map[string]any{"name": fmt.Sprintf("V%d", i), "value": "x"}
	}
	pod := hostilePod(1, "nginx")
	pod["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"] = env
	return pod
}

// mutateForeachPolicy patches the Pod once per environment variable of its
// first container.
const mutateForeachPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: annotate-env}
spec:
  rules:
  - name: annotate-env
    match: {any: [{resources: {kinds: [Pod]}}]}
    mutate:
      foreach:
      - list: request.object.spec.containers[0].env
        patchStrategicMerge:
          metadata:
            annotations:
              last-env: "{{ element.name }}"
`

// wildcardPolicy checks images against a pattern whose middle segment is
// long: the backtracking matcher took len(image)*len(segment) steps.
func wildcardPolicy(pattern string) string {
	return `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: images}
spec:
  rules:
  - name: images
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      pattern:
        spec:
          containers:
          - image: "` + pattern + `"
`
}

// stoppedMessage is the message of a rule the budget or deadline stopped.
func stoppedMessage(err error) string {
	return err.(*engine.Error).Message
}

func budgetError(max int64) error {
	b := engine.NewBudget(context.Background(), max)
	for b.Step(1) == nil {
	}
	return b.Err()
}

// TestEvaluateHonorsDeadline runs hostile policy and resource pairs with a
// context that expires after 100ms and no step limit: the rule reports the
// deadline and Evaluate returns soon after it (the engine used to run the
// loops to their end: minutes for the nested foreach).
func TestEvaluateHonorsDeadline(t *testing.T) {
	const n = 50000
	tests := []struct {
		name       string
		givePolicy string
		giveObject map[string]any
	}{
		{name: "nested foreach over 50k containers", givePolicy: nestedForeachPolicy, giveObject: hostilePod(n, "nginx")},
		{name: "AnyIn over two lists of 50k", givePolicy: anyInPolicy, giveObject: hostilePod(n, "x*")},
		{name: "mutate foreach over 50k variables", givePolicy: mutateForeachPolicy, giveObject: envPod(n)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols := compileInline(t, tt.givePolicy)
			eng := eval.New(eval.Options{MaxSteps: -1})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			resp := eng.Evaluate(ctx, pols, &eval.Request{Object: tt.giveObject})
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Evaluate(%s) took %v after a deadline of 100ms, want less than 2s", tt.name, elapsed)
			}
			if len(resp.Results) != 1 {
				t.Fatalf("Evaluate(%s) = %d results, want 1: %+v", tt.name, len(resp.Results), resp.Results)
			}
			got := resp.Results[0]
			want := "evaluation stopped: " + context.DeadlineExceeded.Error()
			if got.Status != eval.StatusError || got.Message != want {
				t.Errorf("Evaluate(%s) = %s %q, want error %q", tt.name, got.Status, got.Message, want)
			}
			if resp.Patched != nil {
				t.Errorf("Evaluate(%s) patched the object, want no patch from a stopped rule", tt.name)
			}
		})
	}
}

// TestEvaluateStopsAtBudget runs the same pairs without a deadline: the
// step budget stops them, the rule reports it, and the work is about the
// budget.
func TestEvaluateStopsAtBudget(t *testing.T) {
	const n = 50000
	const max = 200000
	tests := []struct {
		name       string
		givePolicy string
		giveObject map[string]any
	}{
		{name: "nested foreach over 50k containers", givePolicy: nestedForeachPolicy, giveObject: hostilePod(n, "nginx")},
		{name: "AnyIn over two lists of 50k", givePolicy: anyInPolicy, giveObject: hostilePod(n, "x*")},
		{name: "mutate foreach over 50k variables", givePolicy: mutateForeachPolicy, giveObject: envPod(n)},
		{name: "wildcard segment with question marks", givePolicy: wildcardPolicy("*" + strings.Repeat("a?", 2000) + "b*c"), giveObject: hostilePod(1, strings.Repeat("a", 4<<20)+"c")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols := compileInline(t, tt.givePolicy)
			eng := eval.New(eval.Options{MaxSteps: max})
			resp := eng.Evaluate(context.Background(), pols, &eval.Request{Object: tt.giveObject})
			if len(resp.Results) != 1 {
				t.Fatalf("Evaluate(%s) = %d results, want 1: %+v", tt.name, len(resp.Results), resp.Results)
			}
			got := resp.Results[0]
			want := stoppedMessage(budgetError(max))
			if got.Status != eval.StatusError || got.Message != want {
				t.Errorf("Evaluate(%s) = %s %q, want error %q", tt.name, got.Status, got.Message, want)
			}
			// The budget is checked every engine.BudgetCheckEvery steps, and a
			// mutate element charges the length of its list at once.
			if limit := int64(max + engine.BudgetCheckEvery + n); resp.Steps > limit {
				t.Errorf("Evaluate(%s) took %d steps, want at most %d", tt.name, resp.Steps, limit)
			}
		})
	}
}

// TestEvaluateBudgetLimit evaluates a foreach rule with a budget of
// exactly the steps it takes, which passes, and one step less, which
// reports the budget.
func TestEvaluateBudgetLimit(t *testing.T) {
	pols := compileInline(t, nestedForeachPolicy)
	obj := hostilePod(30, "nginx")
	steps := eval.New(eval.Options{}).Evaluate(context.Background(), pols, &eval.Request{Object: obj}).Steps
	if steps < 900 {
		t.Fatalf("Evaluate(30x30 foreach) took %d steps, want at least one per pair", steps)
	}
	tests := []struct {
		name         string
		giveMaxSteps int64
		wantStatus   eval.Status
		wantMessage  string
	}{
		{name: "at the limit", giveMaxSteps: steps, wantStatus: eval.StatusPass, wantMessage: "rule passed"},
		{name: "one step over", giveMaxSteps: steps - 1, wantStatus: eval.StatusError, wantMessage: stoppedMessage(budgetError(steps - 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := eval.New(eval.Options{MaxSteps: tt.giveMaxSteps})
			resp := eng.Evaluate(context.Background(), pols, &eval.Request{Object: obj})
			if len(resp.Results) != 1 {
				t.Fatalf("Evaluate(MaxSteps %d) = %d results, want 1", tt.giveMaxSteps, len(resp.Results))
			}
			if got := resp.Results[0]; got.Status != tt.wantStatus || got.Message != tt.wantMessage {
				t.Errorf("Evaluate(MaxSteps %d) = %s %q, want %s %q", tt.giveMaxSteps, got.Status, got.Message, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}

// TestEvaluateHostileWildcard matches a long image name against the
// pattern of issue 17 (a long literal between stars), which took 16s per
// call with the backtracking matcher: it now takes a step per 64
// characters, well within the default budget, and gives Kyverno's result.
func TestEvaluateHostileWildcard(t *testing.T) {
	image := strings.Repeat("a", 4<<20) + "c"
	tests := []struct {
		name        string
		givePattern string
		wantStatus  eval.Status
	}{
		{name: "long literal segment", givePattern: "*" + strings.Repeat("a", 1000) + "b*c", wantStatus: eval.StatusFail},
		{name: "long literal segment that matches", givePattern: "*" + strings.Repeat("a", 1000) + "*c", wantStatus: eval.StatusPass},
		{name: "segment with question marks", givePattern: "*" + strings.Repeat("a?", 500) + "b*c", wantStatus: eval.StatusFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols := compileInline(t, wildcardPolicy(tt.givePattern))
			resp := eval.New(eval.Options{}).Evaluate(context.Background(), pols, &eval.Request{Object: hostilePod(1, image)})
			if len(resp.Results) != 1 || resp.Results[0].Status != tt.wantStatus {
				t.Fatalf("Evaluate(%s) = %+v, want one result %s", tt.name, resp.Results, tt.wantStatus)
			}
			// One step per 64 characters and per 64 pattern runes of a
			// segment with '?', plus the rule's own steps.
			words := int64(len(tt.givePattern)/64 + 1)
			if limit := int64(len(image))*words/64 + 1000; resp.Steps > limit {
				t.Errorf("Evaluate(%s) took %d steps, want at most %d", tt.name, resp.Steps, limit)
			}
		})
	}
}

// strategicPolicy patches one container by name: kyaml's merge compares
// every element of the list with every other.
const strategicPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: pull-always}
spec:
  rules:
  - name: pull-always
    match: {any: [{resources: {kinds: [Pod]}}]}
    mutate:
      patchStrategicMerge:
        spec:
          containers:
          - (name): c0
            imagePullPolicy: Always
`

// TestEvaluateStrategicMergeBudget patches a Pod whose list of containers
// makes the merge quadratic: the patch is charged n² steps before it runs,
// so with 50,000 containers it stops at once with the default budget
// (one such patch took minutes), while a Pod of ordinary size is patched.
func TestEvaluateStrategicMergeBudget(t *testing.T) {
	envPolicy := strings.ReplaceAll(strategicPolicy, "imagePullPolicy: Always", "env: [{name: X, value: y}]")
	tests := []struct {
		name        string
		givePolicy  string
		giveObject  map[string]any
		wantStatus  eval.Status
		wantMessage string
		wantPatched bool
	}{
		{name: "3 containers", givePolicy: strategicPolicy, giveObject: hostilePod(3, "nginx"), wantStatus: eval.StatusPass, wantMessage: "mutated Pod/p in namespace default", wantPatched: true},
		{name: "50k containers", givePolicy: strategicPolicy, giveObject: hostilePod(50000, "nginx"), wantStatus: eval.StatusError, wantMessage: stoppedMessage(budgetError(eval.DefaultMaxSteps))},
		{name: "3 variables", givePolicy: envPolicy, giveObject: envPod(3), wantStatus: eval.StatusPass, wantMessage: "mutated Pod/p in namespace default", wantPatched: true},
		{name: "50k variables in one container", givePolicy: envPolicy, giveObject: envPod(50000), wantStatus: eval.StatusError, wantMessage: stoppedMessage(budgetError(eval.DefaultMaxSteps))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pols := compileInline(t, tt.givePolicy)
			resp := eval.New(eval.Options{}).Evaluate(context.Background(), pols, &eval.Request{Object: tt.giveObject})
			if len(resp.Results) != 1 {
				t.Fatalf("Evaluate(%s) = %d results, want 1: %+v", tt.name, len(resp.Results), resp.Results)
			}
			if got := resp.Results[0]; got.Status != tt.wantStatus || got.Message != tt.wantMessage {
				t.Errorf("Evaluate(%s) = %s %q, want %s %q", tt.name, got.Status, got.Message, tt.wantStatus, tt.wantMessage)
			}
			if got := resp.Patched != nil; got != tt.wantPatched {
				t.Errorf("Evaluate(%s) patched = %v, want %v", tt.name, got, tt.wantPatched)
			}
		})
	}
}
