package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

// spend charges n steps one by one and returns how many went through.
func spend(b *engine.Budget, n int) int {
	for i := range n {
		if b.Step(1) != nil {
			return i
		}
	}
	return n
}

func TestBudgetLimit(t *testing.T) {
	tests := []struct {
		name      string
		giveMax   int64
		giveSteps int
		wantSteps int
		wantCode  engine.Code // "" for no error
	}{
		{name: "under the limit", giveMax: 5000, giveSteps: 4999, wantSteps: 4999},
		{name: "at the limit", giveMax: 5000, giveSteps: 5000, wantSteps: 5000},
		{name: "over the limit", giveMax: 5000, giveSteps: 5001, wantSteps: 5000, wantCode: engine.CodeBudgetExceeded},
		{name: "limit below one check interval", giveMax: 10, giveSteps: 11, wantSteps: 10, wantCode: engine.CodeBudgetExceeded},
		{name: "no limit", giveMax: 0, giveSteps: 100000, wantSteps: 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := engine.NewBudget(context.Background(), tt.giveMax)
			if got := spend(b, tt.giveSteps); got != tt.wantSteps {
				t.Errorf("NewBudget(%d): %d steps went through, want %d", tt.giveMax, got, tt.wantSteps)
			}
			var e *engine.Error
			gotCode := engine.Code("")
			if errors.As(b.Err(), &e) {
				gotCode = e.Code
			}
			if gotCode != tt.wantCode {
				t.Errorf("NewBudget(%d).Err() after %d steps has code %q, want %q", tt.giveMax, tt.giveSteps, gotCode, tt.wantCode)
			}
			if tt.wantCode != "" {
				// Once spent, a budget stays spent and counts no more.
				used := b.Used()
				if err := b.Step(1); err == nil || b.Poll() == nil {
					t.Errorf("NewBudget(%d): Step and Poll after the limit = nil, want the error", tt.giveMax)
				}
				if b.Used() != used {
					t.Errorf("NewBudget(%d).Used() went from %d to %d after the limit", tt.giveMax, used, b.Used())
				}
			}
		})
	}
}

func TestBudgetContext(t *testing.T) {
	tests := []struct {
		name    string
		give    func(b *engine.Budget) int // steps through, after the context is done
		wantMax int
	}{
		{name: "Poll checks every BudgetPollEvery calls", give: func(b *engine.Budget) int {
			for i := range 10 * engine.BudgetPollEvery {
				if b.Poll() != nil {
					return i
				}
			}
			return 10 * engine.BudgetPollEvery
		}, wantMax: engine.BudgetPollEvery},
		{name: "Step checks every BudgetCheckEvery steps", give: func(b *engine.Budget) int { return spend(b, 10*engine.BudgetCheckEvery) }, wantMax: engine.BudgetCheckEvery},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			b := engine.NewBudget(ctx, 0)
			cancel()
			if got := tt.give(b); got > tt.wantMax {
				t.Errorf("%d steps went through after cancel, want at most %d", got, tt.wantMax)
			}
			var e *engine.Error
			if !errors.As(b.Err(), &e) || e.Code != engine.CodeCanceled || !errors.Is(b.Err(), context.Canceled) {
				t.Errorf("Err() = %v, want code %s wrapping context.Canceled", b.Err(), engine.CodeCanceled)
			}
		})
	}
}

func TestNilBudget(t *testing.T) {
	var b *engine.Budget
	if err := b.Step(1 << 30); err != nil {
		t.Errorf("nil Budget Step = %v, want nil", err)
	}
	if err := b.Poll(); err != nil {
		t.Errorf("nil Budget Poll = %v, want nil", err)
	}
	if m, err := b.Match("a*c", "abc"); !m || err != nil {
		t.Errorf("nil Budget Match(a*c, abc) = %v, %v, want true, nil", m, err)
	}
}

// TestBudgetMatch matches a hostile wildcard pattern (a segment with '?'
// costs a step per rune and 64 pattern runes) under a small budget: the
// match stops with the budget's error instead of running to its end.
func TestBudgetMatch(t *testing.T) {
	pattern := "*" + strings.Repeat("a?", 2000) + "b*c"
	name := strings.Repeat("a", 1<<20) + "c"
	const max = 10000
	b := engine.NewBudget(context.Background(), max)
	m, err := b.Match(pattern, name)
	var e *engine.Error
	if m || !errors.As(err, &e) || e.Code != engine.CodeBudgetExceeded {
		t.Errorf("Budget(%d).Match(hostile) = %v, %v, want false and code %s", max, m, err, engine.CodeBudgetExceeded)
	}
	if used := b.Used(); used > max+engine.BudgetCheckEvery {
		t.Errorf("Budget(%d).Match(hostile) used %d steps", max, used)
	}

	b = engine.NewBudget(context.Background(), 0)
	m, err = b.Match(pattern, strings.Repeat("a", 1<<12)+"c")
	if m || err != nil {
		t.Errorf("Budget(no limit).Match(hostile, 4 KiB) = %v, %v, want false, nil", m, err)
	}
}
