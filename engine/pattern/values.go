package pattern

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Numbers. Kyverno's webhook decodes resources with apimachinery's
// unstructured decoder (int64 for integers, float64 otherwise), while the
// Kyverno CLI (apply and test) converts every resource number to float64.
// The difference shows in string comparisons ("*5" matches the int64 5, not
// the float64 5, printed "5E+00") and in messages (1e+06 or 1000000). This
// package keeps the Go type it is given: a float64 is matched as the CLI
// does, an int or int64 as the webhook does, and a json.Number as
// unstructured decoding would read it.
//
// Patterns are decoded by Kyverno with apimachinery's JSON (GetPattern), so
// an integral pattern number is an int64 and any other a float64; so here.

// vkind is the kind of a resource value, as Kyverno sees it.
type vkind uint8

const (
	vNil vkind = iota
	vBool
	vInt
	vFloat
	vString
	vMap
	vList
	vOther
)

// value is a resource scalar classified once, without boxing.
type value struct {
	kind vkind
	b    bool
	i    int64
	f    float64
	s    string
}

// twoTo63 is 2^63, the first float64 outside int64.
const twoTo63 = 9223372036854775808.0

// isInt64 reports whether f is integral and within int64.
func isInt64(f float64) bool {
	return f == math.Trunc(f) && f >= -twoTo63 && f < twoTo63
}

// numberValue classifies a json.Number the way unstructured decoding does:
// an int64 if it parses as one, else a float64.
func numberValue(n json.Number) value {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return value{kind: vInt, i: i}
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		return value{kind: vFloat, f: f}
	}
	return value{kind: vOther}
}

// classify reads a resource value. It never panics on unexpected types.
func classify(v any) value {
	switch t := v.(type) {
	case nil:
		return value{kind: vNil}
	case string:
		return value{kind: vString, s: t}
	case bool:
		return value{kind: vBool, b: t}
	case float64:
		return value{kind: vFloat, f: t}
	case map[string]any:
		return value{kind: vMap}
	case []any:
		return value{kind: vList}
	case int:
		return value{kind: vInt, i: int64(t)}
	case int64:
		return value{kind: vInt, i: t}
	case json.Number:
		return numberValue(t)
	case int32:
		return value{kind: vInt, i: int64(t)}
	case int16:
		return value{kind: vInt, i: int64(t)}
	case int8:
		return value{kind: vInt, i: int64(t)}
	case uint:
		return uintValue(uint64(t))
	case uint64:
		return uintValue(t)
	case uint32:
		return value{kind: vInt, i: int64(t)}
	case uint16:
		return value{kind: vInt, i: int64(t)}
	case uint8:
		return value{kind: vInt, i: int64(t)}
	case float32:
		return value{kind: vFloat, f: float64(t)}
	}
	return value{kind: vOther}
}

func uintValue(u uint64) value {
	if u > math.MaxInt64 {
		return value{kind: vFloat, f: float64(u)}
	}
	return value{kind: vInt, i: int64(u)}
}

// patternNumber reads a number written in a pattern as Kyverno's
// apimachinery JSON decoding would: an int64 when integral, else a float64.
func patternNumber(v any) (any, bool) {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case float32:
		f = float64(t)
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i, true
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, false
		}
		return f, true // "5e0" and "5.0" stay float64, as in apimachinery
	default:
		c := classify(v)
		switch c.kind {
		case vInt:
			return c.i, true
		case vFloat:
			f = c.f
		default:
			return nil, false
		}
	}
	if isInt64(f) {
		return int64(f), true
	}
	return f, true
}

// kyvernoValue deep-converts a resource value into the Go value Kyverno
// would hold, for messages that print it with %v or %T.
func kyvernoValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = kyvernoValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = kyvernoValue(e)
		}
		return out
	case nil, string, bool:
		return t
	}
	c := classify(v)
	switch c.kind {
	case vInt:
		return c.i
	case vFloat:
		return c.f
	}
	return v
}

// renderValue prints a resource value the way Kyverno's "%v" does.
func renderValue(v any) string {
	switch t := v.(type) {
	case nil, string, bool, int64, int:
		return sprint(t)
	case map[string]any, []any:
		return fmt.Sprint(kyvernoValue(v))
	}
	return sprint(kyvernoValue(v))
}

// sprint is fmt.Sprint(v), without fmt for the common scalars.
func sprint(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "<nil>"
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	}
	return fmt.Sprint(v)
}

// typeName prints the Go type Kyverno would report with "%T" for a resource
// value.
func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "map[string]interface {}"
	case []any:
		return "[]interface {}"
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", kyvernoValue(v))
}
