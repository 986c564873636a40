package jmespath

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	gojmespath "github.com/kyverno/go-jmespath"
)

// A few functions build results much larger than their arguments: nine
// nested replace_all calls in a 688-byte policy asked for 10 GB, and
// add('1e9000000', '1') for a 9 MB number after 8 s of big-decimal
// arithmetic. Every function result is bounded; the functions that can
// grow their output beyond a small constant times their input (replace,
// replace_all, regex_replace_all, regex_replace_all_literal, split,
// base64_encode, items, join, to_string, the arithmetic functions) compute
// the size first and fail before they build it. The limits are far above
// what Kubernetes objects hold (etcd stores at most 1.5 MiB per object).
const (
	// MaxStringBytes bounds the length of the string a function returns,
	// in bytes.
	MaxStringBytes = 8 << 20

	// MaxListLength bounds the number of elements of the list a function
	// returns.
	MaxListLength = 1 << 20

	// MaxQuantityDigits bounds the quantity operands of the arithmetic
	// functions (add, subtract, multiply, divide, modulo, sum): at most
	// MaxQuantityDigits digits, and a decimal exponent (1e6, 1e-3) of at
	// most MaxQuantityDigits either way. Kubernetes' quantity parser and
	// big-decimal arithmetic take seconds beyond (1e-9000000 takes more
	// than a second to parse).
	MaxQuantityDigits = 1000
)

// capString fails when a function would return a string of n bytes.
func capString(function string, n int) error {
	if n > MaxStringBytes || n < 0 { // n < 0: the computation overflowed
		return &LimitError{Limit: "MaxStringBytes", Max: MaxStringBytes, Got: n, Function: function}
	}
	return nil
}

// capList fails when a function would return a list of n elements.
func capList(function string, n int) error {
	if n > MaxListLength || n < 0 {
		return &LimitError{Limit: "MaxListLength", Max: MaxListLength, Got: n, Function: function}
	}
	return nil
}

// capResult checks the result of any function against MaxStringBytes and
// MaxListLength, after the fact: for the functions whose result is at most
// a small constant times their arguments (to_upper of invalid UTF-8, which
// becomes U+FFFD, triples).
func capResult(function string, v any) error {
	switch x := v.(type) {
	case string:
		return capString(function, len(x))
	case []any:
		return capList(function, len(x))
	}
	return nil
}

// quantityTooLarge reports whether the quantity string s has more than
// MaxQuantityDigits digits or a decimal exponent beyond MaxQuantityDigits
// either way. Strings that are not quantities at all are not too large.
func quantityTooLarge(s string) bool {
	digits := 0
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for ; i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.'); i++ {
		digits++
	}
	if digits > MaxQuantityDigits {
		return true
	}
	if i >= len(s) || (s[i] != 'e' && s[i] != 'E') {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	exp := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		exp = exp*10 + int(s[i]-'0')
		if exp > MaxQuantityDigits {
			return true
		}
	}
	return false
}

// replaceSize is the length of strings.Replace(s, old, new, n), or a bound
// of it below MaxStringBytes when even a replacement at every byte would
// stay below (which saves counting the matches).
func replaceSize(s, old, new string, n int) int {
	if worst := len(s) + (len(s)+1)*len(new); worst <= MaxStringBytes && worst >= 0 {
		return worst
	}
	count := 0
	if old == "" {
		count = utf8.RuneCountInString(s) + 1
	} else if len(new) > len(old) {
		count = strings.Count(s, old)
	}
	if n >= 0 && n < count {
		count = n
	}
	return len(s) + count*(len(new)-len(old))
}

// jsonSize returns the length of json.Marshal(v) for JSON-shaped values,
// or ok false once it exceeds limit (or for a value of another type, whose
// size it does not know). It visits every element, so shared lists
// ([@, @] nested in pipes) count as many times as JSON writes them.
func jsonSize(v any, limit int) (n int, ok bool) {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil:
			n += 4
		case bool:
			n += 5
		case float64:
			n += floatSize(x)
		case string:
			n += jsonStringSize(x)
		case []any:
			n += 2 + max(len(x)-1, 0) // brackets and commas
			for _, e := range x {
				if n > limit || !walk(e) {
					return false
				}
			}
		case map[string]any:
			n += 2 + max(2*len(x)-1, 0) // braces, colons and commas
			for k, e := range x {
				n += jsonStringSize(k)
				if n > limit || !walk(e) {
					return false
				}
			}
		case json.Number:
			n += len(x)
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32:
			n += 24
		default:
			return false
		}
		return n <= limit
	}
	ok = walk(v)
	return n, ok
}

// floatSize is the length of f as encoding/json writes it, or a little
// more (json also shortens exponents: 1e-07, not 1e-07).
func floatSize(f float64) int {
	var buf [32]byte
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return len(strconv.AppendFloat(buf[:0], f, format, -1, 64))
}

// jsonStringSize is the length of s as encoding/json writes it: quoted,
// with control characters, HTML characters, U+2028, U+2029 and invalid
// bytes escaped as \uXXXX and the short escapes \" \\ \n \r \t.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// The JMESPath built-ins that can build large results, wrapped with their
// limits. They replace go-jmespath's entries in every Interpreter's
// function caller, with the same argument types (go-jmespath checks them
// first) and the same results.
var cappedBuiltins = []gojmespath.FunctionEntry{
	{
		Name: "join",
		Arguments: []gojmespath.ArgSpec{
			{Types: []gojmespath.JpType{gojmespath.JpString}},
			{Types: []gojmespath.JpType{gojmespath.JpArrayString}},
		},
		Handler: jpJoin,
	},
	{
		Name:      "to_string",
		Arguments: []gojmespath.ArgSpec{{Types: []gojmespath.JpType{gojmespath.JpAny}}},
		Handler:   jpToString,
	},
}

// join(sep, list): go-jmespath's jpfJoin, which has already checked that
// every element is a string.
func jpJoin(args []any) (any, error) {
	sep := args[0].(string)
	list := args[1].([]any) // as in go-jmespath: its type check let only []any through
	size := 0
	if len(list) > 0 {
		size = (len(list) - 1) * len(sep)
	}
	parts := make([]string, len(list))
	for i, item := range list {
		parts[i], _ = item.(string)
		size += len(parts[i])
		if err := capString("join", size); err != nil {
			return nil, err
		}
	}
	if err := capString("join", size); err != nil {
		return nil, err
	}
	return strings.Join(parts, sep), nil
}

// to_string(v): go-jmespath's jpfToString, a string as it is and anything
// else as JSON.
func jpToString(args []any) (any, error) {
	if s, ok := args[0].(string); ok {
		return s, nil
	}
	if size, ok := jsonSize(args[0], MaxStringBytes); !ok && size > MaxStringBytes {
		return nil, capString("to_string", size)
	}
	out, err := json.Marshal(args[0])
	if err != nil {
		return nil, err
	}
	if err := capString("to_string", len(out)); err != nil {
		return nil, err
	}
	return string(out), nil
}
