package condition

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

func strList(n int, format string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// TestEvaluateBudget evaluates set operators over two long lists (n² pairs
// of wildcard matches) under a small budget: they stop with the budget's
// error.
func TestEvaluateBudget(t *testing.T) {
	const n = 20000
	tests := []struct {
		name string
		give Operator
	}{
		{name: "AnyIn", give: AnyIn},
		{name: "AllNotIn", give: AllNotIn},
		{name: "AnyNotIn", give: AnyNotIn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const max = 10000
			b := engine.NewBudget(context.Background(), max)
			got, err := EvaluateBudget(strList(n, "key-%d"), tt.give, strList(n, "value-%d*"), b)
			var e *engine.Error
			if got || !errors.As(err, &e) || e.Code != engine.CodeBudgetExceeded {
				t.Errorf("EvaluateBudget(%d keys, %s, %d values) = %v, %v, want false and code %s", n, tt.give, n, got, err, engine.CodeBudgetExceeded)
			}
			if used := b.Used(); used > max+engine.BudgetCheckEvery {
				t.Errorf("EvaluateBudget(%s) used %d steps after a budget of %d", tt.give, used, max)
			}
		})
	}
}

// TestEvaluateBudgetLimit evaluates AnyIn with a budget of exactly the
// steps it takes and one less.
func TestEvaluateBudgetLimit(t *testing.T) {
	keys, values := strList(30, "key-%d"), strList(30, "value-%d")
	counted := engine.NewBudget(context.Background(), 0)
	if got, err := EvaluateBudget(keys, AnyIn, values, counted); got || err != nil {
		t.Fatalf("EvaluateBudget(AnyIn) = %v, %v, want false, nil", got, err)
	}
	steps := counted.Used()
	tests := []struct {
		name    string
		giveMax int64
		wantErr bool
	}{
		{name: "at the limit", giveMax: steps},
		{name: "one step over", giveMax: steps - 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EvaluateBudget(keys, AnyIn, values, engine.NewBudget(context.Background(), tt.giveMax))
			if (err != nil) != tt.wantErr {
				t.Errorf("EvaluateBudget(AnyIn, max %d) error = %v, want error %v", tt.giveMax, err, tt.wantErr)
			}
		})
	}
}
