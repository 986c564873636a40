package pattern

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

func containersOf(n int) map[string]any {
	cs := make([]any, n)
	for i := range cs {
		cs[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": "nginx:1.25"}
	}
	return map[string]any{"spec": map[string]any{"containers": cs}}
}

// TestValidateBudget validates hostile pattern and resource pairs under a
// small budget: matching stops, the result is Error with the budget's
// message, and the budget says why.
func TestValidateBudget(t *testing.T) {
	existence := make([]any, 2000)
	for i := range existence {
		existence[i] = map[string]any{"name": fmt.Sprintf("missing-%d", i)}
	}
	tests := []struct {
		name        string
		givePattern any
		giveObject  any
	}{
		{
			name:        "every element of a long list",
			givePattern: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "!*:latest"}}}},
			giveObject:  containersOf(50000),
		},
		{
			name:        "existence anchor with many maps over a long list",
			givePattern: map[string]any{"spec": map[string]any{"^(containers)": existence}},
			giveObject:  containersOf(50000),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.givePattern)
			if err != nil {
				t.Fatal(err)
			}
			const max = 10000
			b := engine.NewBudget(context.Background(), max)
			got := p.ValidateBudget(tt.giveObject, b)
			var e *engine.Error
			if !errors.As(b.Err(), &e) || e.Code != engine.CodeBudgetExceeded {
				t.Fatalf("ValidateBudget(%s): budget error = %v, want code %s", tt.name, b.Err(), engine.CodeBudgetExceeded)
			}
			if want := (Result{Status: Error, Message: b.Err().Error()}); got != want {
				t.Errorf("ValidateBudget(%s) = %+v, want %+v", tt.name, got, want)
			}
			if used := b.Used(); used > max+engine.BudgetCheckEvery {
				t.Errorf("ValidateBudget(%s) used %d steps after a budget of %d", tt.name, used, max)
			}
		})
	}
}

// TestValidateBudgetLimit validates with a budget of exactly the steps the
// match takes (it passes) and one less (it stops).
func TestValidateBudgetLimit(t *testing.T) {
	p, err := Compile(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "!*:latest"}}}})
	if err != nil {
		t.Fatal(err)
	}
	obj := containersOf(100)
	counted := engine.NewBudget(context.Background(), 0)
	p.ValidateBudget(obj, counted)
	steps := counted.Used()
	tests := []struct {
		name       string
		giveMax    int64
		wantStatus Status
	}{
		{name: "at the limit", giveMax: steps, wantStatus: Pass},
		{name: "one step over", giveMax: steps - 1, wantStatus: Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.ValidateBudget(obj, engine.NewBudget(context.Background(), tt.giveMax))
			if got.Status != tt.wantStatus {
				t.Errorf("ValidateBudget(100 containers, max %d) = %v, want %v", tt.giveMax, got.Status, tt.wantStatus)
			}
		})
	}
}

func TestValidateAnyBudget(t *testing.T) {
	p1, _ := Compile(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "nginx*"}}}})
	p2, _ := Compile(map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "!nginx*"}}}})
	b := engine.NewBudget(context.Background(), 1000)
	got := ValidateAnyBudget([]*Pattern{p1, p2}, containersOf(50000), b)
	if got.Status != Error || b.Err() == nil {
		t.Errorf("ValidateAnyBudget(50k containers, max 1000) = %v (budget error %v), want Error", got.Status, b.Err())
	}
}
