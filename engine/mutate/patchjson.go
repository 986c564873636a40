package mutate

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
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
		dst = appendJSONString(dst, o.Op)
		dst = append(dst, `,"path":`...)
		dst = appendJSONString(dst, o.Path)
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
		return appendJSONString(dst, t), true
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
		if t == nil {
			return append(dst, "null"...), true
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendJSONValue(dst, t[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		if t == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, item := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSONValue(dst, item); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's appendString with HTML escaping (as
// json.Marshal does): quotes, backslashes and control characters escaped,
// <, > and & as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
