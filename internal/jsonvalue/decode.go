package jsonvalue

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// maxDepth is encoding/json's nesting limit; deeper input is left to it
// (it reports the error).
const maxDepth = 10000

var errSlow = errors.New("jsonvalue: needs encoding/json")

// Decode is json.Unmarshal(data, &v) for v of type any.
func Decode(data []byte) (any, error) {
	p := parser{data: data}
	v, err := p.value(0)
	if err == nil {
		p.skipSpace()
		if p.pos == len(p.data) {
			return v, nil
		}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeObject is json.Unmarshal(data, &m) for m of type map[string]any:
// a JSON null gives a nil map, anything but an object an error.
func DecodeObject(data []byte) (map[string]any, error) {
	return decodeObject(data, false)
}

// DecodeObjectShared is DecodeObject for data that no one changes any
// more: the keys and string values of the result share data's memory
// instead of each being copied, so data lives as long as any of them.
func DecodeObjectShared(data []byte) (map[string]any, error) {
	return decodeObject(data, true)
}

func decodeObject(data []byte, shared bool) (map[string]any, error) {
	p := parser{data: data, shared: shared}
	v, err := p.value(0)
	if err == nil {
		p.skipSpace()
		if m, ok := v.(map[string]any); ok && p.pos == len(p.data) {
			return m, nil
		}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

type parser struct {
	data []byte
	pos  int
	// shared: strings point into data (DecodeObjectShared).
	shared bool
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, errSlow
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, errSlow
}

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, errSlow
	}
	p.pos += len(word)
	return v, nil
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errSlow
	}
	p.pos++ // {
	m := make(map[string]any)
	if p.closes('}') {
		return m, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, errSlow
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, errSlow
		}
		p.pos++
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		if end, err := p.separator('}'); err != nil {
			return nil, err
		} else if end {
			return m, nil
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errSlow
	}
	p.pos++ // [
	list := make([]any, 0, 4)
	if p.closes(']') {
		return list, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		if end, err := p.separator(']'); err != nil {
			return nil, err
		} else if end {
			return list, nil
		}
	}
}

// closes reports whether the object or array just opened closes at once
// (with close, read).
func (p *parser) closes(close byte) bool {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == close {
		p.pos++
		return true
	}
	return false
}

// separator reads what follows a member or an element: a comma (false) or
// close, which ends the object or array (true).
func (p *parser) separator(close byte) (end bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, errSlow
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case close:
		p.pos++
		return true, nil
	}
	return false, errSlow
}

// string reads a quoted string. Strings with escapes or bytes outside
// printable ASCII are unquoted by encoding/json itself (its handling of
// invalid UTF-8 and lone surrogates is the contract).
func (p *parser) string() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			if p.shared && i > start {
				return unsafe.String(&p.data[start], i-start), nil
			}
			return string(p.data[start:i]), nil
		case c == '\\' || c >= utf8.RuneSelf:
			return p.slowString()
		case c < 0x20:
			return "", errSlow
		}
	}
	return "", errSlow
}

func (p *parser) slowString() (string, error) {
	// Find the closing quote: a quote not preceded by an odd number of
	// backslashes.
	i := p.pos + 1
	for i < len(p.data) {
		switch p.data[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var s string
			if err := json.Unmarshal(p.data[p.pos:i+1], &s); err != nil {
				return "", errSlow
			}
			p.pos = i + 1
			return s, nil
		}
		i++
	}
	return "", errSlow
}

// number reads a number with JSON's grammar and converts it as
// encoding/json does (strconv.ParseFloat; out of range is its error).
func (p *parser) number() (any, error) {
	start := p.pos
	i := p.pos
	if i < len(p.data) && p.data[i] == '-' {
		i++
	}
	switch {
	case i < len(p.data) && p.data[i] == '0':
		i++
	case i < len(p.data) && p.data[i] >= '1' && p.data[i] <= '9':
		i, _ = digits(p.data, i)
	default:
		return nil, errSlow
	}
	if i < len(p.data) && p.data[i] == '.' {
		var ok bool
		if i, ok = digits(p.data, i+1); !ok {
			return nil, errSlow
		}
	}
	if i < len(p.data) && (p.data[i] == 'e' || p.data[i] == 'E') {
		i++
		if i < len(p.data) && (p.data[i] == '+' || p.data[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(p.data, i); !ok {
			return nil, errSlow
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:i]), 64)
	if err != nil {
		return nil, errSlow
	}
	p.pos = i
	return f, nil
}

// digits returns the end of the run of digits of data at i, and whether
// there is at least one.
func digits(data []byte, i int) (int, bool) {
	j := i
	for j < len(data) && data[j] >= '0' && data[j] <= '9' {
		j++
	}
	return j, j > i
}
