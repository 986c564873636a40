package mutate

import (
	"errors"
	"math"
	"strconv"

	"github.com/verdict-policy/verdict/engine/internal/jsonquote"
)

// appendPatch writes ops as json.Marshal writes them (Operation's
// MarshalJSON for each, HTML characters escaped), without reflection. It
// reports false, having written part of it, when a value holds something
// other than what decoding JSON gives (maps, lists, strings, float64,
// int64, bool, nil) or a number JSON has no text for: json.Marshal writes
// those, or fails on them.
func appendPatch(dst []byte, ops []Operation) ([]byte, bool) {
	dst = append(dst, '[')
	for i, o := range ops {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"op":`...)
		dst = jsonquote.Append(dst, o.Op, jsonquote.Marshal)
		dst = append(dst, `,"path":`...)
		dst = jsonquote.Append(dst, o.Path, jsonquote.Marshal)
		// The value is omitted when empty (a nil interface), except for
		// add and replace.
		if o.Value != nil || o.Op == "add" || o.Op == "replace" {
			dst = append(dst, `,"value":`...)
			var ok bool
			if dst, ok = appendJSONValue(dst, o.Value); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// appendJSONValue writes a JSON value as json.Marshal does; false for
// anything appendPatch leaves to it.
func appendJSONValue(dst []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return jsonquote.Append(dst, t, jsonquote.Marshal), true
	case bool:
		return strconv.AppendBool(dst, t), true
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return dst, false
		}
		return append(dst, formatNumber(t)...), true
	case int64:
		return strconv.AppendInt(dst, t, 10), true
	case map[string]any:
		dst, err := jsonquote.AppendObject(dst, t, jsonquote.Marshal, appendJSONElem)
		return dst, err == nil
	case []any:
		dst, err := jsonquote.AppendArray(dst, t, appendJSONElem)
		return dst, err == nil
	}
	return dst, false
}

// errNotPlain is what appendJSONElem returns where appendJSONValue reports
// false.
var errNotPlain = errors.New("not a plain JSON value")

// appendJSONElem is appendJSONValue in the form jsonquote's containers
// take.
func appendJSONElem(dst []byte, v any) ([]byte, error) {
	dst, ok := appendJSONValue(dst, v)
	if !ok {
		return dst, errNotPlain
	}
	return dst, nil
}
