package jmespath

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/engine"
)

// nested returns open n times, then middle, then close n times.
func nested(open, middle, close string, n int) string {
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

// limitOf returns the *LimitError err wraps, or nil.
func limitOf(err error) *LimitError {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	return nil
}

// The shapes of issue 17: a million nested (, ! or [ in a 1-2 MB
// expression overflowed the stack of go-jmespath's parser, a fatal error no
// recover() catches.
func TestParseHostileExpressions(t *testing.T) {
	const million = 1_000_000
	tests := []struct {
		name      string
		giveExpr  string
		wantLimit string
	}{
		{name: "parentheses", giveExpr: nested("(", "a", ")", million), wantLimit: "MaxExpressionBytes"},
		{name: "nots", giveExpr: strings.Repeat("!", million) + "a", wantLimit: "MaxExpressionBytes"},
		{name: "brackets", giveExpr: nested("[", "a", "]", million), wantLimit: "MaxExpressionBytes"},
		{name: "unclosed brackets", giveExpr: strings.Repeat("[", million), wantLimit: "MaxExpressionBytes"},
		{name: "calls", giveExpr: nested("to_upper(", "a", ")", million/9), wantLimit: "MaxExpressionBytes"},
		// The same shapes within MaxExpressionBytes: the nesting stops them.
		{name: "parentheses within size", giveExpr: nested("(", "a", ")", 30000), wantLimit: "MaxExpressionNesting"},
		{name: "nots within size", giveExpr: strings.Repeat("!", 60000) + "a", wantLimit: "MaxExpressionNesting"},
		{name: "brackets within size", giveExpr: nested("[", "a", "]", 30000), wantLimit: "MaxExpressionNesting"},
		{name: "filters within size", giveExpr: nested("a[?", "b", "]", 10000), wantLimit: "MaxExpressionNesting"},
		{name: "hashes within size", giveExpr: nested("{a:", "b", "}", 10000), wantLimit: "MaxExpressionNesting"},
		{name: "calls within size", giveExpr: nested("to_upper(", "a", ")", 6000), wantLimit: "MaxExpressionNesting"},
		{name: "exprefs within size", giveExpr: "sort_by(a, " + strings.Repeat("& ", 30000) + "b)", wantLimit: "MaxExpressionNesting"},
		{name: "projections within size", giveExpr: "a" + strings.Repeat("[*]", 20000), wantLimit: "MaxExpressionNesting"},
		{name: "slices within size", giveExpr: "a" + strings.Repeat("[:]", 20000), wantLimit: "MaxExpressionNesting"},
		{name: "value projections within size", giveExpr: "a" + strings.Repeat(".*", 30000), wantLimit: "MaxExpressionNesting"},
		// Flat chains parse without deep recursion but build deep trees.
		{name: "subexpressions", giveExpr: "a" + strings.Repeat(".a", 30000), wantLimit: "MaxExpressionDepth"},
		{name: "pipes", giveExpr: "a" + strings.Repeat("|a", 30000), wantLimit: "MaxExpressionDepth"},
		{name: "ors", giveExpr: "a" + strings.Repeat("||a", 20000), wantLimit: "MaxExpressionDepth"},
		{name: "ands", giveExpr: "a" + strings.Repeat("&&a", 20000), wantLimit: "MaxExpressionDepth"},
		{name: "comparisons", giveExpr: "a" + strings.Repeat("==a", 20000), wantLimit: "MaxExpressionDepth"},
		{name: "indexes", giveExpr: "a" + strings.Repeat("[0]", 20000), wantLimit: "MaxExpressionDepth"},
		{name: "negative indexes", giveExpr: "a" + strings.Repeat("[ -1 ]", 10000), wantLimit: "MaxExpressionDepth"},
		{name: "flattens", giveExpr: "a" + strings.Repeat("[]", 30000), wantLimit: "MaxExpressionDepth"},
		{name: "calls on the right", giveExpr: "a" + strings.Repeat(".length(@)", 6000), wantLimit: "MaxExpressionDepth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			q, err := Parse(tt.giveExpr)
			if err == nil {
				t.Fatalf("Parse(<%d bytes>) = %d-byte query, want a %s error", len(tt.giveExpr), len(q.String()), tt.wantLimit)
			}
			var e *engine.Error
			if !errors.As(err, &e) || e.Code != engine.CodeInvalidVariable {
				t.Errorf("Parse(<%d bytes>) error = %v, want an *engine.Error with Code %q", len(tt.giveExpr), err, engine.CodeInvalidVariable)
			}
			if le := limitOf(err); le == nil || le.Limit != tt.wantLimit {
				t.Errorf("Parse(<%d bytes>) error = %v, want a *LimitError of %s", len(tt.giveExpr), err, tt.wantLimit)
			}
			if !strings.Contains(err.Error(), tt.wantLimit) {
				t.Errorf("Parse(<%d bytes>) error = %q, want the message to name %s", len(tt.giveExpr), err, tt.wantLimit)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Parse(<%d bytes>) took %v", len(tt.giveExpr), d)
			}
		})
	}
}

// TestParseAtLimits builds each shape at its limit, which parses, and one
// step beyond it, which is refused.
func TestParseAtLimits(t *testing.T) {
	const n = MaxExpressionNesting
	tests := []struct {
		name      string
		shape     func(k int) string // the expression of nesting or depth k
		limit     int
		wantLimit string
	}{
		{name: "parentheses", shape: func(k int) string { return nested("(", "a", ")", k) }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "nots", shape: func(k int) string { return strings.Repeat("!", k) + "a" }, limit: n, wantLimit: "MaxExpressionNesting"},
		// A multiselect list is a bracket and a projection-or-index of its level.
		{name: "multiselect lists", shape: func(k int) string { return nested("[", "a", "]", k/2) }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "calls", shape: func(k int) string { return nested("to_upper(", "a", ")", k) }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "hashes", shape: func(k int) string { return nested("{a: ", "b", "}", k) }, limit: n, wantLimit: "MaxExpressionNesting"},
		// The bracket and the star of the last projection count two more.
		{name: "projections", shape: func(k int) string { return "a" + strings.Repeat("[*]", k-2) }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "value projections", shape: func(k int) string { return "a" + strings.Repeat(".*", k) }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "exprefs", shape: func(k int) string { return "sort_by(a, " + strings.Repeat("& ", k-1) + "b)" }, limit: n, wantLimit: "MaxExpressionNesting"},
		{name: "subexpressions", shape: func(k int) string { return "a" + strings.Repeat(".a", k-1) }, limit: MaxExpressionDepth, wantLimit: "MaxExpressionDepth"},
		{name: "pipes", shape: func(k int) string { return "a" + strings.Repeat(" | a", k-1) }, limit: MaxExpressionDepth, wantLimit: "MaxExpressionDepth"},
		{name: "ors", shape: func(k int) string { return "a" + strings.Repeat(" || a", k-1) }, limit: MaxExpressionDepth, wantLimit: "MaxExpressionDepth"},
		{name: "size", shape: func(k int) string { return "'" + strings.Repeat("x", k-2) + "'" }, limit: MaxExpressionBytes, wantLimit: "MaxExpressionBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, over := tt.shape(tt.limit), tt.shape(tt.limit+1)
			if tt.name == "multiselect lists" {
				over = tt.shape(tt.limit + 2)
			}
			if _, err := Parse(at); limitOf(err) != nil {
				t.Errorf("Parse(%s at the limit %d) = %v, want no limit error", tt.name, tt.limit, err)
			}
			_, err := Parse(over)
			if le := limitOf(err); le == nil || le.Limit != tt.wantLimit {
				t.Errorf("Parse(%s beyond the limit %d) = %v, want a *LimitError of %s", tt.name, tt.limit, err, tt.wantLimit)
			}
		})
	}
}

// Brackets inside strings and literals are text: they count nothing.
func TestParseNestingIgnoresStrings(t *testing.T) {
	deep := nested("(", "", ")", 4*MaxExpressionNesting)
	tests := []struct {
		name     string
		giveExpr string
	}{
		{name: "raw string", giveExpr: "regex_match('" + deep + "', a)"},
		{name: "raw string with escaped quotes", giveExpr: `regex_match('\'` + deep + `\'', a)`},
		// As in go-jmespath's lexer, \' is a quote even after another
		// backslash.
		{name: "raw string with a backslash before an escaped quote", giveExpr: `'a\\' ` + deep + `'`},
		{name: "quoted identifier", giveExpr: `a."` + deep + `".b`},
		{name: "quoted identifier with escaped quotes", giveExpr: `a."\"` + deep + `\"".b`},
		{name: "JSON literal", giveExpr: "contains(`\"" + deep + "\"`, a)"},
		{name: "JSON literal with escaped backticks", giveExpr: "contains(`\"\\`" + deep + "\\`\"`, a)"},
		{name: "JSON literal of nested arrays", giveExpr: "length(`" + nested("[", "1", "]", 4*MaxExpressionNesting) + "`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse(tt.giveExpr); err != nil {
				t.Errorf("Parse(%.60q...) = %v, want no error", tt.giveExpr, err)
			}
		})
	}
}

// Expressions that do not parse get go-jmespath's own error when they are
// within the limits.
func TestParseSyntaxErrorsWithinLimits(t *testing.T) {
	tests := []struct {
		name     string
		giveExpr string
	}{
		{name: "unclosed raw string full of brackets", giveExpr: "'" + strings.Repeat("(", 1000)},
		{name: "closers only", giveExpr: strings.Repeat(")", 1000)},
		{name: "unclosed parentheses", giveExpr: strings.Repeat("(", MaxExpressionNesting)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.giveExpr)
			if le := limitOf(err); le != nil {
				t.Errorf("Parse(%.40q...) = %v, want go-jmespath's error", tt.giveExpr, err)
			}
		})
	}
}

func TestLimitErrorMessages(t *testing.T) {
	tests := []struct {
		give *LimitError
		want string
	}{
		{give: &LimitError{Limit: "MaxExpressionBytes", Max: 10, Got: 11}, want: "expression of 11 bytes exceeds the limit of 10 bytes (MaxExpressionBytes)"},
		{give: &LimitError{Limit: "MaxExpressionNesting", Max: 3, Got: 4, Offset: 7}, want: "expression nesting exceeds the limit of 3 (MaxExpressionNesting) at byte 7"},
		{give: &LimitError{Limit: "MaxExpressionDepth", Max: 5, Got: 6}, want: "expression tree deeper than the limit of 5 (MaxExpressionDepth)"},
	}
	for _, tt := range tests {
		if got := tt.give.Error(); got != tt.want {
			t.Errorf("(%+v).Error() = %q, want %q", *tt.give, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 199) + "€" + strings.Repeat("b", 100)
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "short", give: "a.b", want: "a.b"},
		{name: "at the limit", give: strings.Repeat("a", 200), want: strings.Repeat("a", 200)},
		{name: "long", give: strings.Repeat("a", 201), want: strings.Repeat("a", 200) + "... (201 bytes)"},
		{name: "cut before a character", give: long, want: strings.Repeat("a", 199) + "... (302 bytes)"},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.give); got != tt.want {
			t.Errorf("Excerpt(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
