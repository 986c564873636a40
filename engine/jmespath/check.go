package jmespath

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	gojmespath "github.com/kyverno/go-jmespath"
)

// checkCalls walks the AST and appends a problem for every call to an
// unknown function, with the wrong number of arguments, or with a literal
// argument (or an &expression) of a type the function never accepts.
func checkCalls(node gojmespath.ASTNode, problems []string) []string {
	if node.NodeType == gojmespath.ASTFunctionExpression {
		problems = checkCall(node, problems)
	}
	for _, child := range node.Children {
		problems = checkCalls(child, problems)
	}
	return problems
}

func checkCall(node gojmespath.ASTNode, problems []string) []string {
	name, _ := node.Value.(string)
	f, ok := lookupFunction(name)
	if !ok {
		return append(problems, fmt.Sprintf("unknown function %s()", Excerpt(name)))
	}
	got, want := len(node.Children), len(f.Args)
	switch {
	case f.Variadic && got < want:
		return append(problems, fmt.Sprintf("function %s() takes at least %s, got %d", name, plural(want, "argument"), got))
	case !f.Variadic && got != want:
		return append(problems, fmt.Sprintf("function %s() takes %s, got %d", name, plural(want, "argument"), got))
	}
	for i, arg := range node.Children {
		t := f.Args[min(i, len(f.Args)-1)]
		switch arg.NodeType {
		case gojmespath.ASTLiteral:
			if !accepts(t, arg.Value) {
				problems = append(problems, fmt.Sprintf("function %s() argument #%d must be %s, got %s literal", name, i+1, t, typeName(arg.Value)))
			}
		case gojmespath.ASTExpRef:
			if t&(tExpref|tAny) == 0 {
				problems = append(problems, fmt.Sprintf("function %s() argument #%d must be %s, got an &expression", name, i+1, t))
			}
		}
	}
	return problems
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func joinProblems(problems []string) string { return strings.Join(problems, "; ") }

// typeName is the JMESPath type of a JSON value.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	}
	if _, ok := toFloat(v); ok {
		return "number"
	}
	if isSlice(v) {
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// checkArgs checks the arguments of a call to a Kyverno function, with
// go-jmespath's error message, and turns every accepted number into a
// float64 in place (args is the call's own slice).
func checkArgs(f function, args []any) error {
	for i, arg := range args {
		if i >= len(f.Args) {
			break
		}
		t := f.Args[i]
		if !accepts(t, arg) {
			//lint:ignore ST1005 go-jmespath's message, which Kyverno users see
			return fmt.Errorf("Invalid type for: %v, expected: %#v", arg, t.jpTypes())
		}
		if t&tNumber != 0 {
			if _, isFloat := arg.(float64); !isFloat {
				if n, ok := toFloat(arg); ok {
					args[i] = n
				}
			}
		}
	}
	return nil
}

// accepts reports whether v has one of the types in t, like go-jmespath's
// type check, but also taking any Go number for a number.
func accepts(t argType, v any) bool {
	if t&tAny != 0 {
		return true
	}
	if t&tString != 0 {
		if _, ok := v.(string); ok {
			return true
		}
	}
	if t&tNumber != 0 {
		if _, ok := toFloat(v); ok {
			return true
		}
	}
	if t&tBool != 0 {
		if _, ok := v.(bool); ok {
			return true
		}
	}
	if t&tObject != 0 {
		if _, ok := v.(map[string]any); ok {
			return true
		}
	}
	if t&tArray != 0 && isSlice(v) {
		return true
	}
	if t&tArrayString != 0 && allOf[string](v) {
		return true
	}
	if t&tArrayNumber != 0 && allOf[float64](v) {
		return true
	}
	return false
}

func allOf[T any](v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range list {
		if _, ok := e.(T); !ok {
			return false
		}
	}
	return true
}

func isSlice(v any) bool {
	if _, ok := v.([]any); ok {
		return true
	}
	return v != nil && reflect.TypeOf(v).Kind() == reflect.Slice
}

// toSlice returns v as []any; other slice types are copied.
func toSlice(v any) ([]any, bool) {
	if list, ok := v.([]any); ok {
		return list, true
	}
	if !isSlice(v) {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// toFloat returns v as a float64 if it is a Go number or a json.Number.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
