package jsonconv

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// checkFast compares fast with UnmarshalJSON of json.Marshal(v) into a
// new T: when fast stores v, UnmarshalJSON must accept it and give the
// same value. It returns what fast reported, and a failure message.
func checkFast[T any, PT interface {
	*T
	json.Unmarshaler
}](v any, fast func(any, *T) bool) (bool, string) {
	var got T
	if !fast(v, &got) {
		var zero T
		if !reflect.DeepEqual(got, zero) {
			return false, fmt.Sprintf("%T fast path(%#v) = false, but wrote %#v", got, v, got)
		}
		return false, ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return true, fmt.Sprintf("%T fast path(%#v) = true, json.Marshal error %v", got, v, err)
	}
	var want T
	if err := PT(&want).UnmarshalJSON(data); err != nil {
		return true, fmt.Sprintf("%T fast path(%#v) = %#v, UnmarshalJSON(%s) error %v", got, v, got, data, err)
	}
	if !reflect.DeepEqual(want, got) {
		return true, fmt.Sprintf("%T fast path(%#v) = %#v, UnmarshalJSON(%s) = %#v", got, v, got, data, want)
	}
	return true, ""
}

func checkAllFast(v any) (stored []string, msgs []string) {
	for _, c := range []struct {
		name  string
		check func(any) (bool, string)
	}{
		{"IntOrString", func(v any) (bool, string) { return checkFast(v, intOrStringFast) }},
		{"Quantity", func(v any) (bool, string) { return checkFast(v, quantityFast) }},
		{"Time", func(v any) (bool, string) { return checkFast(v, timeFast) }},
	} {
		ok, msg := c.check(v)
		if ok {
			stored = append(stored, c.name)
		}
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	return stored, msgs
}

func TestUnmarshalerFast(t *testing.T) {
	tests := []struct {
		name       string
		give       any
		wantStored []string // the types whose fast path stores give
	}{
		{name: "port number", give: 8080.0, wantStored: []string{"IntOrString"}},
		{name: "int64 port", give: int64(8080), wantStored: []string{"IntOrString"}},
		{name: "int port", give: 443, wantStored: []string{"IntOrString"}},
		{name: "negative", give: -1.0, wantStored: []string{"IntOrString"}},
		{name: "negative zero", give: negativeZero(), wantStored: []string{"IntOrString"}},
		{name: "max int32", give: 2147483647.0, wantStored: []string{"IntOrString"}},
		{name: "min int32", give: int64(-2147483648), wantStored: []string{"IntOrString"}},
		{name: "over int32", give: 2147483648.0},
		{name: "under int32", give: int64(-2147483649)},
		{name: "fraction", give: 1.5},
		{name: "exponent", give: 1e21},
		{name: "named port", give: "http", wantStored: []string{"IntOrString"}},
		{name: "percent", give: "25%", wantStored: []string{"IntOrString"}},
		{name: "empty string", give: "", wantStored: []string{"IntOrString"}},
		{name: "html characters", give: "<a&b>", wantStored: []string{"IntOrString"}},
		{name: "escaped characters", give: "a\"b\\c\n", wantStored: []string{"IntOrString"}},
		{name: "invalid utf-8", give: "a\xffb"},
		{name: "cpu", give: "100m", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "memory", give: "128Mi", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "spaces around a quantity", give: " 1Gi ", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "zero quantity", give: "0", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "big quantity", give: "123456789012345678901234567890", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "exponent quantity", give: "1e3", wantStored: []string{"IntOrString", "Quantity"}},
		{name: "null string", give: "null", wantStored: []string{"IntOrString"}},
		{name: "bad quantity", give: "12 Mi", wantStored: []string{"IntOrString"}},
		{name: "timestamp", give: "2024-05-01T10:00:00Z", wantStored: []string{"IntOrString", "Time"}},
		{name: "timestamp with offset", give: "2024-05-01T10:00:00.123+02:00", wantStored: []string{"IntOrString", "Time"}},
		{name: "bad timestamp", give: "2024-05-01", wantStored: []string{"IntOrString"}},
		{name: "bool", give: true},
		{name: "map", give: map[string]any{"a": 1.0}},
		{name: "list", give: []any{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored, msgs := checkAllFast(tt.give)
			for _, m := range msgs {
				t.Error(m)
			}
			if !reflect.DeepEqual(stored, tt.wantStored) {
				t.Errorf("fast paths storing %#v = %v, want %v", tt.give, stored, tt.wantStored)
			}
		})
	}
}

func negativeZero() float64 {
	z := 0.0
	return -z
}

// FuzzUnmarshalerFast compares the fast paths with UnmarshalJSON on
// strings and numbers.
func FuzzUnmarshalerFast(f *testing.F) {
	for _, s := range []string{"http", "100m", "128Mi", " 1Gi ", "0", "1e3", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5-07:00", "25%", "a\xff", "<b>", ""} {
		f.Add(s, 0.0, int64(0), uint8(0))
	}
	f.Add("", 8080.0, int64(-1), uint8(1))
	f.Add("", 2147483648.0, int64(2147483648), uint8(2))
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, which uint8) {
		var v any
		switch which % 3 {
		case 0:
			v = s
		case 1:
			v = x
		case 2:
			v = n
		}
		if _, msgs := checkAllFast(v); len(msgs) > 0 {
			for _, m := range msgs {
				t.Error(m)
			}
		}
	})
}
