package condition

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeCond is a condition whose outcome is fixed; err makes it fail to
// evaluate.
type fakeCond struct {
	ok  bool
	msg string
	err error
}

// evalResult is the outcome of Eval with the conditions it evaluated.
type evalResult struct {
	OK        bool
	Message   string
	Evaluated []string
}

func runFake(cs Conditions[fakeCond]) (evalResult, error) {
	var evaluated []string
	ok, msg, err := cs.Eval(func(c fakeCond) (bool, string, error) {
		evaluated = append(evaluated, c.msg)
		return c.ok, c.msg, c.err
	})
	return evalResult{OK: ok, Message: msg, Evaluated: evaluated}, err
}

func pass(msg string) fakeCond { return fakeCond{ok: true, msg: msg} }
func fail(msg string) fakeCond { return fakeCond{ok: false, msg: msg} }

func TestConditionsEval(t *testing.T) {
	tests := []struct {
		name string
		give Conditions[fakeCond]
		want evalResult
	}{
		{
			name: "empty block holds (deny: {} denies)",
			give: Conditions[fakeCond]{},
			want: evalResult{OK: true},
		},
		{
			name: "empty legacy list holds",
			give: Conditions[fakeCond]{Legacy: true, All: []fakeCond{}},
			want: evalResult{OK: true},
		},
		{
			name: "legacy list all hold, messages joined without space",
			give: Conditions[fakeCond]{Legacy: true, All: []fakeCond{pass("a"), pass(""), pass("b")}},
			want: evalResult{OK: true, Message: "a;b", Evaluated: []string{"a", "", "b"}},
		},
		{
			name: "legacy list stops at the first false with its message only",
			give: Conditions[fakeCond]{Legacy: true, All: []fakeCond{pass("a"), fail("b"), fail("c")}},
			want: evalResult{OK: false, Message: "b", Evaluated: []string{"a", "b"}},
		},
		{
			name: "legacy list failing without message",
			give: Conditions[fakeCond]{Legacy: true, All: []fakeCond{fail("")}},
			want: evalResult{OK: false, Evaluated: []string{""}},
		},
		{
			name: "any written empty fails",
			give: Conditions[fakeCond]{Any: []fakeCond{}},
			want: evalResult{OK: false},
		},
		{
			name: "all written empty holds",
			give: Conditions[fakeCond]{All: []fakeCond{}},
			want: evalResult{OK: true},
		},
		{
			name: "any stops at the first true",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a"), pass("b"), pass("c")}},
			want: evalResult{OK: true, Message: "b", Evaluated: []string{"a", "b"}},
		},
		{
			name: "any all false gives every message",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a"), fail(""), fail("c")}},
			want: evalResult{OK: false, Message: "a; c", Evaluated: []string{"a", "", "c"}},
		},
		{
			name: "all stops at the first false",
			give: Conditions[fakeCond]{All: []fakeCond{pass("a"), fail("b"), pass("c")}},
			want: evalResult{OK: false, Message: "b", Evaluated: []string{"a", "b"}},
		},
		{
			name: "all hold, messages joined with a space",
			give: Conditions[fakeCond]{All: []fakeCond{pass("a"), pass("b")}},
			want: evalResult{OK: true, Message: "a; b", Evaluated: []string{"a", "b"}},
		},
		{
			name: "any and all hold: first true any then every all",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a1"), pass("a2")}, All: []fakeCond{pass("b1"), pass("b2")}},
			want: evalResult{OK: true, Message: "a2; b1; b2", Evaluated: []string{"a1", "a2", "b1", "b2"}},
		},
		{
			name: "all fails after any held: false any messages too",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a1"), pass("a2")}, All: []fakeCond{pass("b1"), fail("b2")}},
			want: evalResult{OK: false, Message: "a1; b2", Evaluated: []string{"a1", "a2", "b1", "b2"}},
		},
		{
			name: "all is evaluated even when any failed",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a1")}, All: []fakeCond{pass("b1"), pass("b2")}},
			want: evalResult{OK: false, Message: "a1", Evaluated: []string{"a1", "b1", "b2"}},
		},
		{
			name: "any and all fail",
			give: Conditions[fakeCond]{Any: []fakeCond{fail("a1")}, All: []fakeCond{fail("b1"), fail("b2")}},
			want: evalResult{OK: false, Message: "a1; b1", Evaluated: []string{"a1", "b1"}},
		},
		{
			name: "a condition after the first true any is not evaluated",
			give: Conditions[fakeCond]{Any: []fakeCond{pass("a"), {msg: "boom", err: errors.New("boom")}}},
			want: evalResult{OK: true, Message: "a", Evaluated: []string{"a"}},
		},
		{
			name: "any is ignored in the legacy form",
			give: Conditions[fakeCond]{Legacy: true, Any: []fakeCond{fail("a")}, All: []fakeCond{pass("b")}},
			want: evalResult{OK: true, Message: "b", Evaluated: []string{"b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runFake(tt.give)
			if err != nil {
				t.Fatalf("Eval(%+v) error = %v", tt.give, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Eval(%+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestConditionsEvalError(t *testing.T) {
	errBoom := errors.New("variable not resolved")
	boom := fakeCond{msg: "boom", err: errBoom}
	tests := []struct {
		name          string
		give          Conditions[fakeCond]
		wantEvaluated []string
	}{
		{name: "legacy", give: Conditions[fakeCond]{Legacy: true, All: []fakeCond{pass("a"), boom, pass("c")}}, wantEvaluated: []string{"a", "boom"}},
		{name: "in any", give: Conditions[fakeCond]{Any: []fakeCond{fail("a"), boom}, All: []fakeCond{pass("c")}}, wantEvaluated: []string{"a", "boom"}},
		{name: "in all after any failed", give: Conditions[fakeCond]{Any: []fakeCond{fail("a")}, All: []fakeCond{boom}}, wantEvaluated: []string{"a", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runFake(tt.give)
			if !errors.Is(err, errBoom) {
				t.Errorf("Eval(%+v) error = %v, want %v", tt.give, err, errBoom)
			}
			if got.OK || got.Message != "" {
				t.Errorf("Eval(%+v) = %v, %q, want false, \"\" with the error", tt.give, got.OK, got.Message)
			}
			if diff := cmp.Diff(tt.wantEvaluated, got.Evaluated); diff != "" {
				t.Errorf("Eval(%+v) evaluated mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestEvalEach(t *testing.T) {
	block := func(cs ...fakeCond) Conditions[fakeCond] { return Conditions[fakeCond]{All: cs} }
	tests := []struct {
		name string
		give []Conditions[fakeCond]
		want evalResult
	}{
		{name: "no blocks hold", give: nil, want: evalResult{OK: true}},
		{
			name: "all blocks hold, messages joined without space",
			give: []Conditions[fakeCond]{block(pass("a"), pass("b")), block(pass("")), block(pass("c"))},
			want: evalResult{OK: true, Message: "a; b;c", Evaluated: []string{"a", "b", "", "c"}},
		},
		{
			name: "first failing block stops with its message",
			give: []Conditions[fakeCond]{block(pass("a")), block(fail("b")), block(pass("c"))},
			want: evalResult{OK: false, Message: "b", Evaluated: []string{"a", "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evaluated []string
			ok, msg, err := EvalEach(tt.give, func(c fakeCond) (bool, string, error) {
				evaluated = append(evaluated, c.msg)
				return c.ok, c.msg, c.err
			})
			if err != nil {
				t.Fatalf("EvalEach(%+v) error = %v", tt.give, err)
			}
			got := evalResult{OK: ok, Message: msg, Evaluated: evaluated}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EvalEach(%+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
