package jmespath

import (
	"fmt"
	"reflect"
	"unicode/utf8"

	gojmespath "github.com/kyverno/go-jmespath"
)

// status is the outcome of an evaluator node.
//
// Parse compiles the AST of every query that is not a simple path into a
// tree of small evaluator nodes, one per AST node, when all of its nodes
// are of the supported kinds: fields, subexpressions, indexes, slices, @,
// literals, projections (list, value, filter), flatten, multiselect lists
// and hashes, ||, &&, !, comparators, pipes and function calls. keys,
// values and length are evaluated by their own nodes with go-jmespath's
// results (compileBuiltin); other function calls go through the
// interpreter's own function caller, so the function table, the argument
// checks and the implementations are the same;
// &expression arguments are passed as the interpreter passes them.
//
// Each node follows go-jmespath's tree interpreter (interpreter.go of
// github.com/kyverno/go-jmespath) step for step: which errors a node
// swallows, that projections drop nulls, that a field of a non-object is
// null, that comparisons order only float64 values, which values are false
// (isFalse). A node returns its value with a status:
//
//   - ok: the interpreter returns the same value and no error;
//   - notFound: the interpreter returns nil and a NotFoundError (a missing
//     key), which the parent nodes swallow or pass on exactly as the
//     interpreter does;
//   - fail: anything else (any other error, a function error, a value of a
//     type the nodes do not know, which the interpreter would handle by
//     reflection). The whole query is then run again by the interpreter,
//     which builds the result or the error itself.
//
// So successes take the compiled path and failures keep the interpreter's
// exact errors. A query whose result is a NotFoundError also goes back to
// the interpreter, the only one that can build that error.
type status uint8

const (
	ok       status = iota
	notFound        // nil with go-jmespath's NotFoundError
	fail            // the interpreter must decide
)

// evaluator is one compiled AST node.
type evaluator interface {
	eval(c *gojmespath.FunctionCaller, v any) (any, status)
}

// treeInterpreter is the interpreter go-jmespath's function caller takes
// (the &expression functions run their expression with it). It has no
// state.
var treeInterpreter = gojmespath.NewInterpreter()

// compile returns the evaluator of node, or nil when a node of the tree is
// outside the supported subset.
func compile(node gojmespath.ASTNode) evaluator {
	switch node.NodeType {
	case gojmespath.ASTField, gojmespath.ASTIndex:
		if steps, ok := simplePath(node); ok {
			return pathNode(steps)
		}
		if name, ok := node.Value.(string); ok && node.NodeType == gojmespath.ASTField {
			return fieldNode(name) // "" (a step of a path is never empty)
		}
		return nil
	case gojmespath.ASTSubexpression, gojmespath.ASTIndexExpression:
		if len(node.Children) != 2 {
			return nil
		}
		if steps, ok := simplePath(node); ok && len(steps) > 0 {
			return pathNode(steps)
		}
		left, right := compile(node.Children[0]), compile(node.Children[1])
		if left == nil || right == nil {
			return nil
		}
		if l, isLister := right.(lister); isLister {
			return &subListNode{left: left, right: l}
		}
		return &subNode{left: left, right: right}
	case gojmespath.ASTIdentity, gojmespath.ASTCurrentNode:
		return currentNode{}
	case gojmespath.ASTLiteral:
		return &literalNode{value: node.Value}
	case gojmespath.ASTSlice:
		parts, ok := node.Value.([]*int)
		if !ok || len(parts) != 3 {
			return nil
		}
		n := &sliceNode{}
		for i, p := range parts {
			if p != nil {
				n.parts[i] = sliceParam{n: *p, specified: true}
			}
		}
		return n
	case gojmespath.ASTProjection:
		if len(node.Children) != 2 {
			return nil
		}
		right := compile(node.Children[1])
		if right == nil {
			return nil
		}
		if node.Children[0].NodeType == gojmespath.ASTFlatten && isIdentity(node.Children[1]) && len(node.Children[0].Children) == 1 {
			// x[] : flatten x, then drop the nulls, in one list.
			if left := compile(node.Children[0].Children[0]); left != nil {
				return newFlatten(left, true)
			}
			return nil
		}
		left := compile(node.Children[0])
		if left == nil {
			return nil
		}
		if _, ok := right.(currentNode); ok {
			return &projectionNode{left: left}
		}
		return &projectionNode{left: left, right: right}
	case gojmespath.ASTFlatten:
		if len(node.Children) != 1 {
			return nil
		}
		if left := compile(node.Children[0]); left != nil {
			return newFlatten(left, false)
		}
		return nil
	case gojmespath.ASTFilterProjection:
		if len(node.Children) != 3 {
			return nil
		}
		left, right, cond := compile(node.Children[0]), compile(node.Children[1]), compile(node.Children[2])
		if left == nil || right == nil || cond == nil {
			return nil
		}
		return &filterNode{left: left, right: right, cond: cond}
	case gojmespath.ASTValueProjection:
		if len(node.Children) != 2 {
			return nil
		}
		left, right := compile(node.Children[0]), compile(node.Children[1])
		if left == nil || right == nil {
			return nil
		}
		return &valueProjectionNode{left: left, right: right}
	case gojmespath.ASTMultiSelectList:
		children := compileAll(node.Children)
		if children == nil {
			return nil
		}
		return &multiListNode{children: children}
	case gojmespath.ASTMultiSelectHash:
		n := &multiHashNode{}
		for _, child := range node.Children {
			key, ok := child.Value.(string)
			if !ok || child.NodeType != gojmespath.ASTKeyValPair || len(child.Children) != 1 {
				return nil
			}
			value := compile(child.Children[0])
			if value == nil {
				return nil
			}
			n.keys = append(n.keys, key)
			n.values = append(n.values, value)
		}
		return n
	case gojmespath.ASTOrExpression, gojmespath.ASTAndExpression:
		if len(node.Children) != 2 {
			return nil
		}
		left, right := compile(node.Children[0]), compile(node.Children[1])
		if left == nil || right == nil {
			return nil
		}
		if node.NodeType == gojmespath.ASTOrExpression {
			return &logicNode{left: left, right: right}
		}
		return &logicNode{left: left, right: right, and: true}
	case gojmespath.ASTNotExpression:
		if len(node.Children) != 1 {
			return nil
		}
		if child := compile(node.Children[0]); child != nil {
			return &notNode{child: child}
		}
		return nil
	case gojmespath.ASTComparator:
		if len(node.Children) != 2 {
			return nil
		}
		op, ok := comparators[fmt.Sprint(node.Value)]
		if !ok {
			return nil
		}
		left, right := compile(node.Children[0]), compile(node.Children[1])
		if left == nil || right == nil {
			return nil
		}
		return &comparatorNode{op: op, left: left, right: right}
	case gojmespath.ASTPipe:
		children := compileAll(node.Children)
		if children == nil {
			return nil
		}
		return &pipeNode{children: children}
	case gojmespath.ASTFunctionExpression:
		name, ok := node.Value.(string)
		if !ok {
			return nil
		}
		if b := compileBuiltin(name, node.Children); b != nil {
			return b
		}
		n := &callNode{name: name, args: make([]evaluator, len(node.Children))}
		for i, arg := range node.Children {
			if arg.NodeType == gojmespath.ASTExpRef {
				ref, err := treeInterpreter.Execute(arg, nil)
				if err != nil {
					return nil
				}
				n.args[i] = &literalNode{value: ref}
				continue
			}
			if n.args[i] = compile(arg); n.args[i] == nil {
				return nil
			}
		}
		return n
	}
	return nil
}

// compileAll compiles nodes, or returns nil if one is not supported.
func compileAll(nodes []gojmespath.ASTNode) []evaluator {
	out := make([]evaluator, len(nodes))
	for i, n := range nodes {
		if out[i] = compile(n); out[i] == nil {
			return nil
		}
	}
	return out
}

func isIdentity(n gojmespath.ASTNode) bool {
	return n.NodeType == gojmespath.ASTIdentity || n.NodeType == gojmespath.ASTCurrentNode
}

// evalCompiled runs the compiled form of a query; ok is false where the
// interpreter must run (a fail or notFound status, or a panic, for example
// in a go-jmespath built-in given a wrong type).
func evalCompiled(e evaluator, c *gojmespath.FunctionCaller, data any) (result any, done bool) {
	defer func() {
		if r := recover(); r != nil {
			result, done = nil, false
		}
	}()
	v, s := e.eval(c, data)
	return v, s == ok
}

// kind is the JSON kind of a value as go-jmespath sees it.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber // float64: the only number type comparisons order
	kindString
	kindArray  // []any
	kindObject // map[string]any
	kindScalar // other numbers: null fields, not false, never ordered
	kindOther  // reflection in go-jmespath: the interpreter decides
)

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case float64:
		return kindNumber
	case string:
		return kindString
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	case int64, int, int32, float32, uint64, uint32, uint:
		return kindScalar
	}
	return kindOther
}

// isFalse is go-jmespath's isFalse for the known kinds; known is false for
// the others.
func isFalse(v any) (false_, known bool) {
	switch t := v.(type) {
	case nil:
		return true, true
	case bool:
		return !t, true
	case string:
		return t == "", true
	case []any:
		return len(t) == 0, true
	case map[string]any:
		return len(t) == 0, true
	case float64, int64, int, int32, float32, uint64, uint32, uint:
		return false, true
	}
	return false, false
}

// swallow is how most interpreter nodes treat a child's NotFoundError:
// the child's value (nil) is used as if there were no error.
func swallow(s status) status {
	if s == notFound {
		return ok
	}
	return s
}

// pathNode is a chain of fields and indexes (a.b[0].c), walked in one
// loop. A missing key is notFound and ends the walk, as the interpreter's
// subexpression passes the error on.
type pathNode []step

func (p pathNode) eval(_ *gojmespath.FunctionCaller, v any) (any, status) {
	for _, s := range p {
		if s.field != "" {
			switch t := v.(type) {
			case map[string]any:
				var found bool
				if v, found = t[s.field]; !found {
					return nil, notFound
				}
			default:
				// fieldFromStruct: null for everything but structs and
				// pointers, which only reflection can read.
				if k := kindOf(v); k == kindOther {
					return nil, fail
				}
				v = nil
			}
			continue
		}
		switch t := v.(type) {
		case []any:
			v = at(t, s.index)
		default:
			if k := kindOf(v); k == kindOther {
				return nil, fail
			}
			v = nil
		}
	}
	return v, ok
}

// fieldNode is a field of any name, the empty one included.
type fieldNode string

func (f fieldNode) eval(_ *gojmespath.FunctionCaller, v any) (any, status) {
	if m, isMap := v.(map[string]any); isMap {
		if x, found := m[string(f)]; found {
			return x, ok
		}
		return nil, notFound
	}
	if kindOf(v) == kindOther {
		return nil, fail
	}
	return nil, ok
}

// lister is implemented by the nodes whose value is always a list or null
// (projections, flatten, slices, multiselect lists, keys): a parent that
// takes a list gets it without the allocation of boxing it in an any. The
// list may be the data's own (a flatten that had nothing to merge): it is
// only read.
// isList false means null.
type lister interface {
	evaluator
	list(c *gojmespath.FunctionCaller, v any) (l []any, isList bool, s status)
}

// boxList is the eval of a lister.
func boxList(l []any, isList bool, s status) (any, status) {
	if !isList {
		return nil, s
	}
	return l, s
}

// listOf evaluates e for a parent that takes a list: the list, or
// isList false for any other value; notFound is passed on (the parents
// treat it as null) and a value only reflection could read is a fail.
func listOf(e evaluator, c *gojmespath.FunctionCaller, v any) (l []any, isList bool, s status) {
	if le, isLister := e.(lister); isLister {
		return le.list(c, v)
	}
	x, s := e.eval(c, v)
	if s != ok {
		return nil, false, s
	}
	if l, isList = x.([]any); !isList && kindOf(x) == kindOther {
		return nil, false, fail
	}
	return l, isList, ok
}

// subNode is a subexpression or an index expression: right applied to
// left's value; left's error (notFound included) is the result.
type subNode struct{ left, right evaluator }

func (n *subNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	l, s := n.left.eval(c, v)
	if s != ok {
		return nil, s
	}
	return n.right.eval(c, l)
}

// subListNode is a subNode whose right side is a lister.
type subListNode struct {
	left  evaluator
	right lister
}

func (n *subListNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *subListNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	l, s := n.left.eval(c, v)
	if s != ok {
		return nil, false, s
	}
	return n.right.list(c, l)
}

type currentNode struct{}

func (currentNode) eval(_ *gojmespath.FunctionCaller, v any) (any, status) { return v, ok }

type literalNode struct{ value any }

func (n *literalNode) eval(*gojmespath.FunctionCaller, any) (any, status) { return n.value, ok }

type sliceParam struct {
	n         int
	specified bool
}

// sliceNode is [start:stop:step] (go-jmespath's slice and
// computeSliceParams).
type sliceNode struct{ parts [3]sliceParam }

func (n *sliceNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *sliceNode) list(_ *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	list, isList := v.([]any)
	if !isList {
		if kindOf(v) == kindOther {
			return nil, false, fail
		}
		return nil, false, ok
	}
	step := 1
	if n.parts[2].specified {
		if n.parts[2].n == 0 {
			return nil, false, fail // "Invalid slice, step cannot be 0"
		}
		step = n.parts[2].n
	}
	length := len(list)
	var start, stop int
	switch {
	case n.parts[0].specified:
		start = capSlice(length, n.parts[0].n, step)
	case step < 0:
		start = length - 1
	}
	switch {
	case n.parts[1].specified:
		stop = capSlice(length, n.parts[1].n, step)
	case step < 0:
		stop = -1
	default:
		stop = length
	}
	out := []any{}
	if step > 0 {
		if stop > start {
			out = make([]any, 0, (stop-start+step-1)/step)
		}
		for i := start; i < stop; i += step {
			out = append(out, list[i])
		}
	} else {
		if start > stop {
			out = make([]any, 0, (start-stop-step-1)/(-step))
		}
		for i := start; i > stop; i += step {
			out = append(out, list[i])
		}
	}
	return out, true, ok
}

func capSlice(length, actual, step int) int {
	if actual < 0 {
		actual += length
		if actual < 0 {
			if step < 0 {
				actual = -1
			} else {
				actual = 0
			}
		}
	} else if actual >= length {
		if step < 0 {
			actual = length - 1
		} else {
			actual = length
		}
	}
	return actual
}

// projectionNode is a list projection (a[*].b, and the right side of
// a[].b): right applied to each element of left, nulls dropped. A nil
// right is @.
type projectionNode struct{ left, right evaluator }

func (n *projectionNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *projectionNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	list, isList, s := listOf(n.left, c, v)
	if s == fail {
		return nil, false, fail
	}
	if !isList {
		return nil, false, ok // a missing key, or not a list: null
	}
	out := make([]any, 0, len(list))
	for _, el := range list {
		cur := el
		if n.right != nil {
			if cur, s = n.right.eval(c, el); swallow(s) != ok {
				return nil, false, fail
			}
		}
		if cur != nil {
			out = append(out, cur)
		}
	}
	return out, true, ok
}

// flattenNode is x[] without a projection on its right (dropNil false),
// or the whole projection x[] (dropNil true, the right side being @):
// elements that are lists are merged one level. Any error of left is
// null, as in the interpreter.
//
// A list that holds no list to merge (and no null, for dropNil) is the
// result itself instead of a copy: results already share the data they
// were read from (a path returns the data's own list) and are only read.
type flattenNode struct {
	left    evaluator
	dropNil bool
}

func newFlatten(left evaluator, dropNil bool) *flattenNode {
	return &flattenNode{left: left, dropNil: dropNil}
}

func (n *flattenNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *flattenNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	list, isList, s := listOf(n.left, c, v)
	if s == fail {
		return nil, false, fail
	}
	if !isList {
		return nil, false, ok // an error of left, or not a list: null
	}
	size, lists, nils := 0, false, false
	for _, el := range list {
		switch t := el.(type) {
		case []any:
			size += len(t)
			lists = true
		case nil:
			size++
			nils = true
		default:
			if kindOf(el) == kindOther {
				return nil, false, fail // a typed slice is flattened by reflection
			}
			size++
		}
	}
	if !lists && (!n.dropNil || !nils) {
		return list, true, ok
	}
	out := make([]any, 0, size)
	for _, el := range list {
		if inner, isList := el.([]any); isList {
			if !n.dropNil {
				out = append(out, inner...)
				continue
			}
			for _, x := range inner {
				if x != nil {
					out = append(out, x)
				}
			}
			continue
		}
		if el != nil || !n.dropNil {
			out = append(out, el)
		}
	}
	return out, true, ok
}

// filterNode is a[?cond].right.
type filterNode struct{ left, right, cond evaluator }

func (n *filterNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *filterNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	list, isList, s := listOf(n.left, c, v)
	if s == fail {
		return nil, false, fail
	}
	if !isList {
		return nil, false, ok // an error of left, or not a list: null
	}
	out := []any{}
	for _, el := range list {
		r, s := n.cond.eval(c, el)
		if swallow(s) != ok {
			return nil, false, fail
		}
		f, known := isFalse(r)
		if !known {
			return nil, false, fail
		}
		if f {
			continue
		}
		cur, s := n.right.eval(c, el)
		if swallow(s) != ok {
			return nil, false, fail
		}
		if cur != nil {
			out = append(out, cur)
		}
	}
	return out, true, ok
}

// valueProjectionNode is a.*.right. Like the interpreter, it applies right
// to len(a) nulls first (go-jmespath makes the list of values with that
// length, then appends), then to the values in map order.
type valueProjectionNode struct{ left, right evaluator }

func (n *valueProjectionNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *valueProjectionNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	l, s := n.left.eval(c, v)
	switch s {
	case fail:
		return nil, false, fail
	case notFound:
		return nil, false, ok
	}
	m, isMap := l.(map[string]any)
	if !isMap {
		return nil, false, ok
	}
	out := []any{}
	add := func(el any) bool {
		cur, s := n.right.eval(c, el)
		if swallow(s) != ok {
			return false
		}
		if cur != nil {
			out = append(out, cur)
		}
		return true
	}
	for range len(m) {
		if !add(nil) {
			return nil, false, fail
		}
	}
	for _, el := range m {
		if !add(el) {
			return nil, false, fail
		}
	}
	return out, true, ok
}

// multiListNode is [a, b]: null for null, else each child's value, nulls
// kept.
type multiListNode struct{ children []evaluator }

func (n *multiListNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *multiListNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	if v == nil {
		return nil, false, ok
	}
	out := make([]any, len(n.children))
	for i, child := range n.children {
		cur, s := child.eval(c, v)
		if swallow(s) != ok {
			return nil, false, fail
		}
		out[i] = cur
	}
	return out, true, ok
}

// multiHashNode is {k: a, ...}.
type multiHashNode struct {
	keys   []string
	values []evaluator
}

func (n *multiHashNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	if v == nil {
		return nil, ok
	}
	out := make(map[string]any, len(n.keys))
	for i, child := range n.values {
		cur, s := child.eval(c, v)
		if swallow(s) != ok {
			return nil, fail
		}
		out[n.keys[i]] = cur
	}
	return out, ok
}

// logicNode is a || b (!and) or a && b (and): a when it decides the
// result (true for ||, false for &&), else b. For || a missing b is null;
// && returns b with its error, as go-jmespath's interpreter does.
type logicNode struct {
	left, right evaluator
	and         bool
}

func (n *logicNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	l, s := n.left.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	f, known := isFalse(l)
	if !known {
		return nil, fail
	}
	if f == n.and {
		return l, ok
	}
	if n.and {
		return n.right.eval(c, v)
	}
	r, s := n.right.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	return r, ok
}

// notNode is !a.
type notNode struct{ child evaluator }

func (n *notNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	r, s := n.child.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	f, known := isFalse(r)
	if !known {
		return nil, fail
	}
	return f, ok
}

// comparator operators.
type comparator uint8

const (
	opEQ comparator = iota
	opNE
	opLT
	opLTE
	opGT
	opGTE
)

// comparators maps go-jmespath's token names (the comparator node's value
// printed) to operators.
var comparators = map[string]comparator{
	"tEQ": opEQ, "tNE": opNE, "tLT": opLT, "tLTE": opLTE, "tGT": opGT, "tGTE": opGTE,
}

// comparatorNode is a == b and the like: equality is reflect.DeepEqual
// (so 1.0 and int64(1) differ), and ordering is defined for float64
// values only; anything else is null.
type comparatorNode struct {
	op          comparator
	left, right evaluator
}

func (n *comparatorNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	l, s := n.left.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	r, s := n.right.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	switch n.op {
	case opEQ:
		return equal(l, r), ok
	case opNE:
		return !equal(l, r), ok
	}
	ln, isNum := l.(float64)
	if !isNum {
		return nil, ok
	}
	rn, isNum := r.(float64)
	if !isNum {
		return nil, ok
	}
	switch n.op {
	case opLT:
		return ln < rn, ok
	case opLTE:
		return ln <= rn, ok
	case opGT:
		return ln > rn, ok
	}
	return ln >= rn, ok
}

// equal is reflect.DeepEqual, without reflection for two strings or two
// float64 values.
func equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, isString := b.(string)
		return isString && x == y
	case float64:
		y, isNum := b.(float64)
		return isNum && x == y
	case bool:
		y, isBool := b.(bool)
		return isBool && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// pipeNode is a | b | ...: each child applied to the previous value; a
// missing key is null and the pipe goes on.
type pipeNode struct{ children []evaluator }

func (n *pipeNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	var s status
	for _, child := range n.children {
		if v, s = child.eval(c, v); swallow(s) != ok {
			return nil, fail
		}
	}
	return v, ok
}

// callNode is a function call through go-jmespath's function caller (the
// same table, argument checks and implementations as the interpreter). A
// missing argument is null; any error of the function is a fail, so that
// the interpreter reports it.
type callNode struct {
	name string
	args []evaluator
}

func (n *callNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	args := make([]any, len(n.args))
	for i, arg := range n.args {
		cur, s := arg.eval(c, v)
		if swallow(s) != ok {
			return nil, fail
		}
		args[i] = cur
	}
	r, err := c.CallFunction(n.name, args, treeInterpreter)
	if err != nil {
		return nil, fail
	}
	return r, ok
}

// compileBuiltin returns a node that evaluates a call of one of
// go-jmespath's keys, values or length itself, with the result of its
// jpfKeys, jpfValues and jpfLength (argument checks included: an argument
// of another type is a fail, which the interpreter turns into its error),
// without the argument list and the lookup of a call. nil for the other
// functions.
func compileBuiltin(name string, args []gojmespath.ASTNode) evaluator {
	if len(args) != 1 || args[0].NodeType == gojmespath.ASTExpRef {
		return nil
	}
	switch name {
	case "keys", "values", "length":
	default:
		return nil
	}
	arg := compile(args[0])
	if arg == nil {
		return nil
	}
	if name == "length" {
		return &lengthNode{arg: arg}
	}
	return &keysNode{arg: arg, values: name == "values"}
}

// keysNode is keys(arg) or values(arg): the keys or values of an object
// in map order, as jpfKeys and jpfValues range over the map (the order
// varies from one call to the next in both).
type keysNode struct {
	arg    evaluator
	values bool
}

func (n *keysNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	return boxList(n.list(c, v))
}

func (n *keysNode) list(c *gojmespath.FunctionCaller, v any) ([]any, bool, status) {
	a, s := n.arg.eval(c, v)
	if swallow(s) != ok {
		return nil, false, fail
	}
	m, isMap := a.(map[string]any)
	if !isMap {
		return nil, false, fail // go-jmespath's type error
	}
	out := make([]any, 0, len(m))
	if n.values {
		for _, x := range m {
			out = append(out, x)
		}
		return out, true, ok
	}
	for k := range m {
		out = append(out, k)
	}
	return out, true, ok
}

// lengthNode is length(arg): the runes of a string, the elements of a
// list, the keys of an object; anything else (typed lists included, which
// go-jmespath measures by reflection) is a fail.
type lengthNode struct{ arg evaluator }

func (n *lengthNode) eval(c *gojmespath.FunctionCaller, v any) (any, status) {
	a, s := n.arg.eval(c, v)
	if swallow(s) != ok {
		return nil, fail
	}
	switch t := a.(type) {
	case string:
		return float64(utf8.RuneCountInString(t)), ok
	case []any:
		return float64(len(t)), ok
	case map[string]any:
		return float64(len(t)), ok
	}
	return nil, fail
}
