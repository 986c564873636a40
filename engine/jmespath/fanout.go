package jmespath

import gojmespath "github.com/kyverno/go-jmespath"

// JMESPath values share their parts: [@, @] is a list holding the same
// value twice. A pipe of such multiselects doubles the value at each step
// in a few bytes of memory, and whatever walks or copies it then does the
// work of its full size: 's' | [@, @] | [@, @] ... forty times, then [] as
// many times, asks for 2^40 list elements; its JSON, 2^40 copies of 's'.
// Two limits stop it. At compile time, the fanout of an expression (how
// many times its result can hold its input) is at most
// MaxExpressionFanout. At evaluation, the result of an expression whose
// fanout is above one may hold at most MaxResultNodes values, counted as
// JSON writes them, so that chains of such expressions (through context
// entries) cannot grow beyond.
const (
	// MaxExpressionFanout bounds the fanout of an expression: how many
	// times its result can hold the value it is applied to. A multiselect
	// ([a, b], {x: a, y: b}) adds up the fanouts of its parts, unless they
	// are distinct paths of fields and indexes, none a prefix of another
	// (spec.[containers, initContainers] holds each part once); a pipe, a
	// subexpression or a projection multiplies the fanouts of its sides;
	// map multiplies those of its expression and list; merge adds up those
	// of its arguments, the other functions that return their arguments
	// (not_null, items, values, sort_by, ...) take theirs, and the rest
	// build new values (fanout 1). The policies of the Kyverno policy
	// library and the examples of Kyverno's documentation have fanouts of
	// at most 2.
	MaxExpressionFanout = 64

	// MaxResultNodes bounds the result of an expression whose fanout is
	// above one: the values it holds (lists, objects, strings, numbers,
	// ...), each list or object counted with all it holds, shared parts
	// counted as many times as they appear.
	MaxResultNodes = 1 << 18
)

// maxFanout saturates fanout computations.
const maxFanout = 1 << 40

// fanout is the fanout of node (see MaxExpressionFanout), at most
// maxFanout. The tree is at most MaxExpressionDepth deep.
func fanout(node gojmespath.ASTNode) int {
	switch node.NodeType {
	case gojmespath.ASTSubexpression, gojmespath.ASTIndexExpression, gojmespath.ASTPipe,
		gojmespath.ASTProjection, gojmespath.ASTValueProjection:
		f := 1
		for _, c := range node.Children {
			f = mulFanout(f, fanout(c))
		}
		return f
	case gojmespath.ASTFilterProjection:
		// left, right (applied to each element left yields), condition
		// (a truth value, not part of the result).
		if len(node.Children) != 3 {
			return maxFanout
		}
		return mulFanout(fanout(node.Children[0]), fanout(node.Children[1]))
	case gojmespath.ASTMultiSelectList, gojmespath.ASTMultiSelectHash:
		if disjointPaths(node.Children) {
			return 1
		}
		return sumFanout(node.Children)
	case gojmespath.ASTOrExpression, gojmespath.ASTAndExpression:
		f := 1
		for _, c := range node.Children {
			f = max(f, fanout(c))
		}
		return f
	case gojmespath.ASTFunctionExpression:
		return callFanout(node)
	case gojmespath.ASTFlatten, gojmespath.ASTExpRef, gojmespath.ASTKeyValPair:
		if len(node.Children) != 1 {
			return maxFanout
		}
		return fanout(node.Children[0])
	}
	// Fields, indexes, slices, @, literals (a constant of the expression),
	// and the truth values of !, comparisons.
	return 1
}

// callFanout is the fanout of a function call: the functions that return
// their arguments or parts of them hold them once (merge all of them,
// not_null one); map holds what its expression makes of each element; the
// others build new strings, numbers and truth values (or lists of new
// strings: split), which hold no part of the input.
func callFanout(node gojmespath.ASTNode) int {
	name, _ := node.Value.(string)
	args := node.Children
	arg := func(i int) int {
		if i < len(args) {
			return fanout(args[i])
		}
		return 1
	}
	switch name {
	case "map":
		return mulFanout(arg(0), arg(1))
	case "merge":
		return max(sumFanout(args), 1)
	case "not_null":
		f := 1
		for i := range args {
			f = max(f, arg(i))
		}
		return f
	case "items", "lookup", "reverse", "sort", "sort_by", "max_by", "min_by", "to_array", "values":
		return arg(0)
	case "object_from_lists":
		return arg(1)
	}
	return 1
}

func sumFanout(nodes []gojmespath.ASTNode) int {
	f := 0
	for _, c := range nodes {
		f = min(f+fanout(c), maxFanout)
	}
	return f
}

func mulFanout(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > maxFanout/b {
		return maxFanout
	}
	return a * b
}

// disjointPaths reports whether the parts of a multiselect (key-value
// pairs for a hash) are simple paths of which none is a prefix of another:
// each part of the input appears once in the result.
func disjointPaths(children []gojmespath.ASTNode) bool {
	paths := make([][]step, 0, len(children))
	for _, c := range children {
		if c.NodeType == gojmespath.ASTKeyValPair {
			if len(c.Children) != 1 {
				return false
			}
			c = c.Children[0]
		}
		p, ok := simplePath(c)
		if !ok || len(p) == 0 {
			return false
		}
		paths = append(paths, p)
	}
	for i, a := range paths {
		for _, b := range paths[i+1:] {
			if isPrefix(a, b) || isPrefix(b, a) {
				return false
			}
		}
	}
	return true
}

// isPrefix reports whether path a is a prefix of path b. Indexes are
// compared as written: [0] and [-1] may be the same element, so two
// indexes are a prefix of each other unless both are positive and differ.
func isPrefix(a, b []step) bool {
	if len(a) > len(b) {
		return false
	}
	for i, s := range a {
		t := b[i]
		switch {
		case s.field != "" || t.field != "":
			if s.field != t.field {
				return false
			}
		case s.index >= 0 && t.index >= 0 && s.index != t.index:
			return false
		}
	}
	return true
}

// resultNodes counts the values of v as JSON writes them (see
// MaxResultNodes), or returns ok false once there are more than limit.
func resultNodes(v any, limit int) (n int, ok bool) {
	stack := []any{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		if n > limit {
			return n, false
		}
		switch t := x.(type) {
		case []any:
			if n+len(t) > limit {
				return n + len(t), false
			}
			stack = append(stack, t...)
		case map[string]any:
			if n+len(t) > limit {
				return n + len(t), false
			}
			for _, e := range t {
				stack = append(stack, e)
			}
		}
	}
	return n, true
}

func fanoutError(f, max int) *LimitError {
	return &LimitError{Limit: "MaxExpressionFanout", Max: max, Got: f}
}

func resultError(n int) *LimitError {
	return &LimitError{Limit: "MaxResultNodes", Max: MaxResultNodes, Got: n}
}
