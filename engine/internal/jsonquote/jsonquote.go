package jsonquote

import (
	"slices"
	"unicode/utf8"
)

// Style is whose output Append gives.
type Style uint8

const (
	// Marshal is encoding/json's appendString with HTML escaping.
	Marshal Style = iota
	// Iterator is json-iterator's: \b and \f as \u00XX.
	Iterator
)

const hex = "0123456789abcdef"

// Append appends s to dst as a JSON string, quoted as style does.
func Append(dst []byte, s string, style Style) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case b == '\\' || b == '"':
				dst = append(dst, '\\', b)
			case b == '\n':
				dst = append(dst, '\\', 'n')
			case b == '\r':
				dst = append(dst, '\\', 'r')
			case b == '\t':
				dst = append(dst, '\\', 't')
			case b == '\b' && style == Marshal:
				dst = append(dst, '\\', 'b')
			case b == '\f' && style == Marshal:
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
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
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendObject appends m as a JSON object: "null" for a nil map, else its
// keys sorted and quoted as style does, each value written by elem. The
// first error of elem is returned, with what was written up to it.
func AppendObject(dst []byte, m map[string]any, style Style, elem func([]byte, any) ([]byte, error)) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = Append(dst, k, style)
		dst = append(dst, ':')
		var err error
		if dst, err = elem(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendArray appends list as a JSON array ("null" for a nil slice), each
// item written by elem; the first error of elem is returned.
func AppendArray(dst []byte, list []any, elem func([]byte, any) ([]byte, error)) ([]byte, error) {
	if list == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, item := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = elem(dst, item); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}
