package jmespath

import (
	"strings"
	"testing"
	"time"

	gojmespath "github.com/kyverno/go-jmespath"

	"github.com/verdict-policy/verdict/engine"
)

func TestFanout(t *testing.T) {
	tests := []struct {
		giveExpr string
		want     int
	}{
		{giveExpr: "a.b[0]", want: 1},
		{giveExpr: "`[1, 2]`", want: 1},
		{giveExpr: "[a, b]", want: 1},
		{giveExpr: "spec.[containers, initContainers, ephemeralContainers][]", want: 1},
		{giveExpr: "{x: metadata.name, y: metadata.namespace}", want: 1},
		{giveExpr: "[a[0], a[1]]", want: 1},
		{giveExpr: "[a, a]", want: 2},
		{giveExpr: "[@, @]", want: 2},
		{giveExpr: "[a, a.b]", want: 2},
		{giveExpr: "[a[0], a[-1]]", want: 2},
		{giveExpr: "{x: @, y: @}", want: 2},
		{giveExpr: "[to_upper(a), to_upper(b), length(c)]", want: 3},
		{giveExpr: "[@, @] | [@, @]", want: 4},
		{giveExpr: "[@, @].[@, @, @]", want: 6},
		{giveExpr: "a[*].[@, @]", want: 2},
		{giveExpr: "a[?b].[@, @][]", want: 2},
		{giveExpr: "a || [@, @]", want: 2},
		{giveExpr: "map(&[@, @], list)", want: 2},
		{giveExpr: "map(&[@, @], [@, @])", want: 4},
		{giveExpr: "merge(@, @)", want: 2},
		{giveExpr: "merge(@, {breakglass: null})", want: 2},
		{giveExpr: "not_null(a, [@, @])", want: 2},
		{giveExpr: "sort_by([@, @], &a)", want: 2},
		{giveExpr: "object_from_lists(keys(@), [@, @])", want: 2},
		{giveExpr: "to_string([@, @])", want: 1},
		{giveExpr: "'x'" + strings.Repeat(" | [@, @]", 20), want: 1 << 20},
		{giveExpr: "'x'" + strings.Repeat(" | [@, @]", 50), want: maxFanout},
	}
	for _, tt := range tests {
		ast, err := gojmespath.NewParser().Parse(tt.giveExpr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.giveExpr, err)
		}
		if got := fanout(ast); got != tt.want {
			t.Errorf("fanout(%.60q) = %d, want %d", tt.giveExpr, got, tt.want)
		}
	}
}

// 's' | [@, @] forty times, then [] forty times, asked for 2^40 list
// elements: Parse refuses it.
func TestParseFanoutLimit(t *testing.T) {
	const stages = 6 // 2^6 = MaxExpressionFanout
	at := "'x'" + strings.Repeat(" | [@, @]", stages) + strings.Repeat(" | []", stages)
	if _, err := Parse(at); err != nil {
		t.Errorf("Parse(fanout %d) = %v, want no error", MaxExpressionFanout, err)
	}
	tests := []struct {
		name     string
		giveExpr string
	}{
		{name: "one beyond", giveExpr: "'x'" + strings.Repeat(" | [@, @]", stages+1)},
		{name: "the hostile shape", giveExpr: "'x'" + strings.Repeat(" | [@, @]", 40) + strings.Repeat(" | []", 40)},
		{name: "in a map expression", giveExpr: "map(&(@" + strings.Repeat(" | [@, @]", 40) + "), list)"},
		{name: "in hashes", giveExpr: "@" + strings.Repeat(" | {a: @, b: @}", 40) + " | to_string(@)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.giveExpr)
			if code := errorCode(err); code != engine.CodeInvalidVariable {
				t.Errorf("Parse(%.60q) error code = %q (%v), want %q", tt.giveExpr, code, err, engine.CodeInvalidVariable)
			}
			if le := limitOf(err); le == nil || le.Limit != "MaxExpressionFanout" {
				t.Errorf("Parse(%.60q) = %v, want a *LimitError of MaxExpressionFanout", tt.giveExpr, err)
			}
		})
	}
}

// The result of an expression whose fanout is above one holds at most
// MaxResultNodes values; [list, list] holds 3+2n for a list of n.
func TestSearchResultNodes(t *testing.T) {
	in := newTestInterpreter(Options{})
	q, err := Parse("[list, list]")
	if err != nil {
		t.Fatal(err)
	}
	at := (MaxResultNodes - 3) / 2
	if _, err := in.Search(q, map[string]any{"list": make([]any, at)}); err != nil {
		t.Errorf("Search([list, list]) of %d elements = %v, want no error", at, err)
	}
	_, err = in.Search(q, map[string]any{"list": make([]any, at+1)})
	if le := limitOf(err); le == nil || le.Limit != "MaxResultNodes" || errorCode(err) != engine.CodeEvaluation {
		t.Errorf("Search([list, list]) of %d elements = %v, want a *LimitError of MaxResultNodes", at+1, err)
	}
}

// Context entries can feed an expression's result to the next one: each
// result is bounded, so chains of [@, @] stop.
func TestSearchSharedChain(t *testing.T) {
	in := newTestInterpreter(Options{})
	q, err := Parse("[@, @, @, @]")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var v any = "x"
	for i := 0; ; i++ {
		v, err = in.Search(q, v)
		if err != nil {
			if le := limitOf(err); le == nil || le.Limit != "MaxResultNodes" {
				t.Errorf("Search([@, @, @, @]) after %d steps = %v, want a *LimitError of MaxResultNodes", i, err)
			}
			break
		}
		if i == 40 {
			t.Fatal("Search([@, @, @, @]) of its own result 40 times: no error")
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the chain took %v", d)
	}
}
