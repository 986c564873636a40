package jmespath

import (
	"fmt"
	"unicode/utf8"

	gojmespath "github.com/kyverno/go-jmespath"
)

// go-jmespath's parser is recursive descent: every (, [, {, ! and & of an
// expression, and every projection, costs it stack frames, and Go cannot
// recover from a stack overflow. The interpreter, and this package's own
// walks of the tree (checkCalls, compile, ...), recurse over the parsed
// tree, whose depth also grows with flat chains such as a.a.a... or
// a || a || .... So Parse checks three limits: the size and the nesting of
// the text before go-jmespath parses it, and the depth of the tree after,
// without recursion.
//
// Real policies are far below them: the 445 ClusterPolicies and Policies
// of the Kyverno policy library (kyverno/policies) and the examples of
// Kyverno's documentation have expressions of at most 459 bytes, a nesting
// (as counted below) of at most 5 and trees at most 14 deep.
const (
	// MaxExpressionBytes is the size of the longest expression Parse
	// accepts, in bytes.
	MaxExpressionBytes = 64 << 10

	// MaxExpressionNesting bounds the nesting of an expression, as counted
	// in its text before parsing: each open (, [, [? and { counts one;
	// inside each of them, and at the top, each [ that is not an index
	// ([0], [-1]), [? and * (projections, slices, filters, multiselect
	// lists) and each ! counts one until the next ',', ':', '|', '||', '&&'
	// or comparison at the same level; and each & counts one
	// until the next ',' or the end of the enclosing bracket. Quoted
	// identifiers, raw strings and JSON literals count nothing. go-jmespath
	// recurses a small constant number of times per unit at most.
	MaxExpressionNesting = 256

	// MaxExpressionDepth bounds the depth of the parsed tree (the nodes on
	// its longest branch: a.b.c is 3 deep, a || b || c too).
	MaxExpressionDepth = 1000
)

// LimitError is an expression or a function result beyond one of the
// limits of this package. It is the Err of the *engine.Error that Parse
// (expressions: Code engine.CodeInvalidVariable) or Search (results: Code
// engine.CodeEvaluation) returns.
type LimitError struct {
	// Limit is the name of the exported constant that was exceeded, for
	// example "MaxExpressionNesting" or "MaxStringBytes".
	Limit string
	// Max is the value of the limit.
	Max int
	// Got is the size, nesting or depth found; for nesting and depth, the
	// count where the check stopped (Max+1).
	Got int
	// Function is the function whose result was too large, for the limits
	// of results; "" for the limits of expressions.
	Function string
	// Offset is the byte offset in the expression where MaxExpressionNesting
	// was exceeded; 0 for the other limits.
	Offset int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "MaxExpressionBytes":
		return fmt.Sprintf("expression of %d bytes exceeds the limit of %d bytes (%s)", e.Got, e.Max, e.Limit)
	case "MaxExpressionNesting":
		return fmt.Sprintf("expression nesting exceeds the limit of %d (%s) at byte %d", e.Max, e.Limit, e.Offset)
	case "MaxExpressionDepth":
		return fmt.Sprintf("expression tree deeper than the limit of %d (%s)", e.Max, e.Limit)
	case "MaxStringBytes":
		return fmt.Sprintf(errPrefix+"result of %d bytes exceeds the limit of %d bytes (%s)", e.Function, e.Got, e.Max, e.Limit)
	case "MaxListLength":
		return fmt.Sprintf(errPrefix+"result of %d elements exceeds the limit of %d elements (%s)", e.Function, e.Got, e.Max, e.Limit)
	case "MaxExpressionFanout":
		if e.Got >= maxFanout {
			return fmt.Sprintf("expression may hold its input more than %d times (%s): multiselects repeat it in pipes", e.Max, e.Limit)
		}
		return fmt.Sprintf("expression may hold its input %d times, more than the limit of %d (%s)", e.Got, e.Max, e.Limit)
	case "MaxResultNodes":
		return fmt.Sprintf("result holds more than %d values (%s): the expression repeats parts of its input", e.Max, e.Limit)
	case "MaxQuantityDigits":
		return fmt.Sprintf(errPrefix+"quantity operand with more than %d digits or an exponent beyond %d (%s)", e.Function, e.Max, e.Max, e.Limit)
	}
	return fmt.Sprintf("%s: %d exceeds the limit of %d", e.Limit, e.Got, e.Max)
}

// exprLimits are the limits checkExpression applies; the exported
// constants in production, smaller ones in tests.
type exprLimits struct {
	bytes, nesting, depth, fanout int
}

var defaultExprLimits = exprLimits{bytes: MaxExpressionBytes, nesting: MaxExpressionNesting, depth: MaxExpressionDepth, fanout: MaxExpressionFanout}

// checkText checks the size and the nesting of expr (see
// MaxExpressionNesting) in one pass over its bytes, without recursion. It
// tokenizes as go-jmespath's lexer does wherever that matters to nesting:
// raw strings ('...', where \' is a quote), quoted identifiers and JSON
// literals ("..." and `...`, where a backslash escapes any character),
// and the two-character tokens [?, [], ||, &&, != and the like. A string
// left open runs to the end. The text need not be valid: the parser then
// reports its own error.
func checkText(expr string, lim exprLimits) error {
	if len(expr) > lim.bytes {
		return &LimitError{Limit: "MaxExpressionBytes", Max: lim.bytes, Got: len(expr)}
	}
	// level is one open bracket, or the top of the expression.
	type level struct {
		chain   int // projections, indexes and ! since the last operator
		exprefs int // & since the last ','
	}
	levels := make([]level, 1, 16)
	total := 0 // the nesting: open brackets plus every level's chain and exprefs
	grow := func(n *int, at int) error {
		*n++
		total++
		if total > lim.nesting {
			return &LimitError{Limit: "MaxExpressionNesting", Max: lim.nesting, Got: total, Offset: at}
		}
		return nil
	}
	// resetChain ends the ! and projections of the current level.
	resetChain := func() {
		top := &levels[len(levels)-1]
		total -= top.chain
		top.chain = 0
	}
	open := func(at int, chain bool) error {
		if chain {
			if err := grow(&levels[len(levels)-1].chain, at); err != nil {
				return err
			}
		}
		levels = append(levels, level{})
		var opened int
		return grow(&opened, at)
	}
	next := func(i int) byte {
		if i+1 < len(expr) {
			return expr[i+1]
		}
		return 0
	}
	for i := 0; i < len(expr); i++ {
		var err error
		switch c := expr[i]; c {
		case '\'':
			i = rawStringEnd(expr, i)
		case '"', '`':
			i = delimitedEnd(expr, i, c)
		case '(', '{':
			err = open(i, false)
		case '[':
			switch next(i) {
			case ']': // [] flattens: no bracket, no recursion of the parser
				i++
			case '?':
				err = open(i, true)
				i++
			default:
				// An index ([0], [-1]) is parsed in a loop; projections and
				// slices recurse.
				err = open(i, !isIndex(expr, i))
			}
		case ')', ']', '}':
			if len(levels) > 1 {
				top := levels[len(levels)-1]
				total -= 1 + top.chain + top.exprefs
				levels = levels[:len(levels)-1]
			}
		case '*':
			err = grow(&levels[len(levels)-1].chain, i)
		case '!':
			if next(i) == '=' {
				i++
				resetChain()
			} else {
				err = grow(&levels[len(levels)-1].chain, i)
			}
		case '&':
			if next(i) == '&' {
				i++
				resetChain()
			} else {
				err = grow(&levels[len(levels)-1].exprefs, i)
			}
		case '|', '<', '>', '=':
			if n := next(i); n == '|' || n == '=' {
				i++
			}
			resetChain()
		case ',':
			resetChain()
			top := &levels[len(levels)-1]
			total -= top.exprefs
			top.exprefs = 0
		case ':':
			resetChain()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// isIndex reports whether the bracket at expr[start] opens an index: an
// integer between brackets, spaces allowed.
func isIndex(expr string, start int) bool {
	j := start + 1
	skipSpaces := func() {
		for j < len(expr) && (expr[j] == ' ' || expr[j] == '\t' || expr[j] == '\n' || expr[j] == '\r') {
			j++
		}
	}
	skipSpaces()
	if j < len(expr) && expr[j] == '-' {
		j++
	}
	digits := j
	for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
		j++
	}
	if j == digits {
		return false
	}
	skipSpaces()
	return j < len(expr) && expr[j] == ']'
}

// rawStringEnd returns the offset of the quote that ends the raw string
// literal starting at the quote expr[start], or len(expr) when it runs to
// the end. As in go-jmespath's lexer, \' is a quote and any other
// backslash is itself.
func rawStringEnd(expr string, start int) int {
	j := start + 1
	for j < len(expr) && expr[j] != '\'' && j+1 < len(expr) {
		if expr[j] == '\\' && expr[j+1] == '\'' {
			j++
		}
		j++
	}
	return j
}

// delimitedEnd returns the offset of the delim that ends the quoted
// identifier or JSON literal starting at expr[start], or len(expr) when it
// runs to the end. A backslash escapes the character after it.
func delimitedEnd(expr string, start int, delim byte) int {
	j := start + 1
	for j < len(expr) && expr[j] != delim {
		if expr[j] == '\\' {
			j++
		}
		j++
	}
	return j
}

// checkDepth checks that the tree is at most max nodes deep, with an
// explicit stack instead of recursion.
func checkDepth(root *gojmespath.ASTNode, max int) error {
	type item struct {
		node  *gojmespath.ASTNode
		depth int
	}
	stack := []item{{root, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > max {
			return &LimitError{Limit: "MaxExpressionDepth", Max: max, Got: it.depth}
		}
		for i := range it.node.Children {
			stack = append(stack, item{&it.node.Children[i], it.depth + 1})
		}
	}
	return nil
}

// maxExcerpt is the length of the excerpts of expressions in messages.
const maxExcerpt = 200

// Excerpt returns s for an error message: s itself when it is at most 200
// bytes long, else its first bytes (cut between two UTF-8 characters),
// "..." and its length. Messages that quote an expression use it, so that
// an expression of MaxExpressionBytes (or a longer one, refused) never
// makes a message of that size.
func Excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}
