package condition

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/verdict-policy/verdict/engine"
)

// Evaluate applies op to key and value, whose variables are already
// substituted, and reports whether the condition holds. It reproduces
// Kyverno v1.19's operator handlers (pkg/engine/variables/operator) type by
// type; where Kyverno logs an error and returns false, Evaluate returns
// false. An unknown op yields false. Evaluate never panics.
//
// Values are JSON values: nil, bool, float64, string, []any and
// map[string]any. int and int64 are treated the way Kyverno treats them
// (they differ from float64 in a few places, see doc.go); a json.Number is
// read as the float64 encoding/json would have produced.
func Evaluate(key any, op Operator, value any) bool {
	return evaluate(key, op, value, nil)
}

// EvaluateBudget is Evaluate charging b (nil: no limit) with one step per
// pair of elements the set operators compare and with the work of wildcard
// matches, so that AnyIn or AllIn over two long lists stops when b is
// spent or its context is done. The error is then b's *engine.Error (code
// CodeBudgetExceeded or CodeCanceled) and the result means nothing.
func EvaluateBudget(key any, op Operator, value any, b *engine.Budget) (bool, error) {
	ok := evaluate(key, op, value, b)
	if err := b.Err(); err != nil {
		return false, err
	}
	return ok, nil
}

func evaluate(key any, op Operator, value any, b *engine.Budget) bool {
	key, value = normalize(key), normalize(value)
	switch op {
	case Equals:
		return equals(key, value, b)
	case NotEquals:
		return notEquals(key, value, b)
	case In:
		return in(key, value, false, b)
	case NotIn:
		return in(key, value, true, b)
	case AnyIn:
		return anyIn(key, value, false, b)
	case AnyNotIn:
		return anyIn(key, value, true, b)
	case AllIn:
		return allIn(key, value, false, b)
	case AllNotIn:
		return allIn(key, value, true, b)
	case GreaterThan, GreaterThanOrEquals, LessThan, LessThanOrEquals:
		return numeric(key, op, value)
	case DurationGreaterThan, DurationGreaterThanOrEquals, DurationLessThan, DurationLessThanOrEquals:
		return durationOp(key, op, value)
	}
	return false
}

// normalize turns a json.Number into the float64 encoding/json would have
// decoded. Other values are returned unchanged.
func normalize(v any) any {
	if n, ok := v.(json.Number); ok {
		return numberToFloat(n)
	}
	return v
}

func numberToFloat(n json.Number) any {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// Not a number encoding/json could have produced; keep the text.
		return string(n)
	}
	return f
}

// sprint formats v like fmt.Sprint, which Kyverno uses to turn the elements
// of a set operand into strings ("1", "1.5", "true", "1e+08", "map[a:b]").
func sprint(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return fmt.Sprint(numberToFloat(v))
	}
	return fmt.Sprint(v)
}

// deepEqual reports whether a and b are equal JSON values, with the results
// of reflect.DeepEqual (which Kyverno uses): types must match exactly
// (float64(1) differs from int64(1)), a nil map or slice differs from an
// empty one, NaN differs from itself. A json.Number compares as float64.
func deepEqual(a, b any) bool {
	a, b = normalize(a), normalize(b)
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !deepEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !deepEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
