package mutate

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Operation is one RFC 6902 JSON Patch operation.
type Operation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes the operation; add and replace always carry a value,
// null included.
func (o Operation) MarshalJSON() ([]byte, error) {
	if o.Value == nil && (o.Op == "add" || o.Op == "replace") {
		return json.Marshal(struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}{o.Op, o.Path, nil})
	}
	type plain Operation
	return json.Marshal(plain(o))
}

// Diff returns the JSON Patch that turns original into patched, with the
// algorithm of gomodules.xyz/jsonpatch/v2 (the one Kyverno's webhook uses):
// maps are compared key by key, a list that changed length gets removes
// from its end or adds at its end, and elements are compared by index. It
// differs only in order: keys are visited sorted, so the patch is the same
// on every call.
func Diff(original, patched any) []Operation {
	return diffValues(original, patched, "", nil)
}

// MarshalPatch writes operations as a JSON array, "[]" for none: the bytes
// of json.Marshal(ops), written without reflection for the values decoded
// JSON holds (patchjson.go).
func MarshalPatch(ops []Operation) ([]byte, error) {
	if len(ops) == 0 {
		return []byte("[]"), nil
	}
	if b, ok := appendPatch(make([]byte, 0, 96*len(ops)), ops); ok {
		return b, nil
	}
	return json.Marshal(ops)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func pointerJoin(path, part string) string {
	return path + "/" + pointerEscaper.Replace(part)
}

func diffValues(a, b any, path string, ops []Operation) []Operation {
	if a == nil && b == nil || same(a, b) {
		return ops
	}
	if !sameType(a, b) {
		return append(ops, Operation{Op: "replace", Path: path, Value: b})
	}
	switch at := a.(type) {
	case map[string]any:
		bt := b.(map[string]any)
		keys := make([]string, 0, len(bt))
		for k := range bt {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			av, ok := at[k]
			if !ok {
				ops = append(ops, Operation{Op: "add", Path: pointerJoin(path, k), Value: bt[k]})
				continue
			}
			if unchangedValue(av, bt[k]) {
				continue
			}
			ops = diffValues(av, bt[k], pointerJoin(path, k), ops)
		}
		keys = keys[:0]
		for k := range at {
			if _, ok := bt[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			ops = append(ops, Operation{Op: "remove", Path: pointerJoin(path, k)})
		}
	case []any:
		bt := b.([]any)
		n := min(len(at), len(bt))
		for i := len(at) - 1; i >= n; i-- {
			ops = append(ops, Operation{Op: "remove", Path: pointerJoin(path, strconv.Itoa(i))})
		}
		for i := n; i < len(bt); i++ {
			ops = append(ops, Operation{Op: "add", Path: pointerJoin(path, strconv.Itoa(i)), Value: bt[i]})
		}
		for i := 0; i < n; i++ {
			if unchangedValue(at[i], bt[i]) {
				continue
			}
			ops = diffValues(at[i], bt[i], pointerJoin(path, strconv.Itoa(i)), ops)
		}
	default:
		if !equalScalars(a, b) {
			ops = append(ops, Operation{Op: "replace", Path: path, Value: b})
		}
	}
	return ops
}

// unchangedValue is the cheap part of diffValues' equality: the same
// container, or equal scalars; its JSON pointer need not be built.
func unchangedValue(a, b any) bool {
	if a == nil && b == nil || same(a, b) {
		return true
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return sameType(a, b) && equalScalars(a, b)
}

// sameType reports whether two JSON values have the same JSON type.
func sameType(a, b any) bool {
	return jsonType(a) == jsonType(b)
}

func jsonType(v any) byte {
	switch v.(type) {
	case nil:
		return 'z'
	case map[string]any:
		return 'o'
	case []any:
		return 'a'
	case string:
		return 's'
	case bool:
		return 'b'
	}
	if _, ok := toFloat(v); ok {
		return 'n'
	}
	return '?'
}

func equalScalars(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return a == b
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case float32:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	case int64:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}

// Equal reports whether two JSON values are equal (numbers by value).
func Equal(a, b any) bool {
	if same(a, b) {
		return true
	}
	if !sameType(a, b) {
		return false
	}
	switch at := a.(type) {
	case map[string]any:
		bt := b.(map[string]any)
		if len(at) != len(bt) {
			return false
		}
		for k, av := range at {
			bv, ok := bt[k]
			if !ok || !Equal(av, bv) {
				return false
			}
		}
		return true
	case []any:
		bt := b.([]any)
		if len(at) != len(bt) {
			return false
		}
		for i := range at {
			if !Equal(at[i], bt[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	}
	return equalScalars(a, b)
}

// same reports whether a and b are the same map or list (a merge shares
// the parts it did not change), which makes comparing them needless.
func same(a, b any) bool {
	switch at := a.(type) {
	case map[string]any:
		bt, ok := b.(map[string]any)
		return ok && len(at) == len(bt) && len(at) > 0 && reflect.ValueOf(at).UnsafePointer() == reflect.ValueOf(bt).UnsafePointer()
	case []any:
		bt, ok := b.([]any)
		return ok && len(at) == len(bt) && len(at) > 0 && &at[0] == &bt[0]
	}
	return false
}
