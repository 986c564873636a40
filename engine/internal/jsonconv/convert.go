package jsonconv

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/verdict-policy/verdict/engine/internal/jsonconv/internal/layout"
)

// errFallback reports a value Into does not convert by itself, either
// because json.Unmarshal would fail on it (the caller's round trip then
// produces json's exact error) or because the conversion depends on
// details Into does not model (case-insensitive keys, `,string` options,
// byte slices, arrays, ...).
var errFallback = errors.New("jsonconv: value needs the JSON round trip")

// Into stores v, a value of the generic JSON form (map[string]any, []any,
// string, float64 or int64, bool, nil), into the value dst points to, with
// the result json.Unmarshal(json.Marshal(v), dst) would give. dst must
// point to a zero value. When Into cannot guarantee that result it leaves
// dst partly written and returns an error; the caller then decodes into a
// fresh value with the JSON round trip, which also gives json's error
// messages for invalid input.
func Into(v any, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errFallback
	}
	return store(v, rv.Elem())
}

// Decode is Into with the fallback: it decodes v into a new T, through the
// JSON round trip when Into cannot.
func Decode[T any](v any) (*T, error) {
	return decode(v, func(v any, dst *T) error { return Into(v, dst) })
}

// decode stores v into a new T with into (Into, or a generated converter
// with the same rules), and through the JSON round trip when into cannot.
func decode[T any](v any, into func(any, *T) error) (*T, error) {
	var out T
	if err := into(v, &out); err == nil {
		return &out, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var slow T
	if err := json.Unmarshal(data, &slow); err != nil {
		return nil, err
	}
	return &slow, nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func store(v any, dst reflect.Value) error {
	t := dst.Type()
	if v == nil {
		// json sets pointers, maps, slices and interfaces to nil for a
		// null, calls UnmarshalJSON of a non-pointer Unmarshaler with
		// "null" and leaves everything else as it is.
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			dst.SetZero()
			return nil
		}
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			return dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON([]byte("null"))
		}
		return nil
	}
	if t.Kind() == reflect.Pointer {
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		return store(v, dst.Elem())
	}
	info := typeInfoOf(t)
	if info.unmarshaler {
		data, err := marshal(v)
		if err != nil {
			return errFallback
		}
		if err := dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
			return errFallback
		}
		return nil
	}
	if info.textUnmarshaler {
		s, ok := v.(string)
		if !ok {
			return errFallback
		}
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return errFallback
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return errFallback
		}
		return storeStruct(m, dst, info)
	case reflect.Map:
		m, ok := v.(map[string]any)
		kt := t.Key()
		if !ok || kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
			return errFallback
		}
		out := reflect.MakeMapWithSize(t, len(m))
		elem := reflect.New(t.Elem()).Elem()
		for k, x := range m {
			elem.SetZero()
			if err := store(x, elem); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(kt), elem)
		}
		dst.Set(out)
		return nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return errFallback // base64 strings
		}
		list, ok := v.([]any)
		if !ok {
			return errFallback
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, x := range list {
			if err := store(x, out.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(out)
		return nil
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return errFallback
		}
		dst.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return errFallback
		}
		dst.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := integer(v)
		if !ok || dst.OverflowInt(i) {
			return errFallback
		}
		dst.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		i, ok := integer(v)
		if !ok || i < 0 || dst.OverflowUint(uint64(i)) {
			return errFallback
		}
		dst.SetUint(uint64(i))
		return nil
	case reflect.Float32, reflect.Float64:
		var f float64
		switch n := v.(type) {
		case float64:
			f = n
		case int64:
			f = float64(n)
		case int:
			f = float64(n)
		default:
			return errFallback
		}
		if dst.OverflowFloat(f) {
			return errFallback
		}
		dst.SetFloat(f)
		return nil
	}
	// Interfaces (json builds float64 numbers where v may hold int64),
	// arrays, channels, functions.
	return errFallback
}

// marshal is json.Marshal(v), without its buffers for the values the
// custom unmarshalers mostly see (quantities, times, ports by name or
// number).
func marshal(v any) ([]byte, error) {
	return appendMarshal(nil, v)
}

// appendMarshal appends json.Marshal(v) to dst: itself for strings that
// need no escaping, integers and the floats json writes without an
// exponent, json.Marshal's result (not appended to dst) otherwise.
func appendMarshal(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if plain(x) {
			dst = slices.Grow(dst, len(x)+2)
			dst = append(dst, '"')
			dst = append(dst, x...)
			return append(dst, '"'), nil
		}
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		// json writes 'f' format for 0 and magnitudes in [1e-6, 1e21),
		// 'e' format (with its own exponent spelling) otherwise.
		if abs := math.Abs(x); abs == 0 || (abs >= 1e-6 && abs < 1e21) {
			return strconv.AppendFloat(dst, x, 'f', -1, 64), nil
		}
	case bool:
		return strconv.AppendBool(dst, x), nil
	}
	return json.Marshal(v)
}

// plain reports whether json.Marshal writes s between quotes as it is:
// printable ASCII other than the quote, the backslash and the characters
// of HTML it escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// integer returns v as an int64 when json would parse the number's text
// as one: an integral float64 that json.Marshal prints without an
// exponent, or an int64.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		// json.Marshal prints integral floats below 1e21 as plain
		// digits; int64 covers [-2^63, 2^63).
		if n != math.Trunc(n) || n < -9.223372036854775808e18 || n >= 9.223372036854775808e18 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

func storeStruct(m map[string]any, dst reflect.Value, info *typeInfo) error {
	for k, x := range m {
		f, ok := info.fields[k]
		if !ok {
			if info.folds(k) {
				// json would match the key case-insensitively, and with
				// several spellings the order of the keys decides.
				return errFallback
			}
			continue
		}
		fv, err := fieldByIndex(dst, f)
		if err != nil {
			return err
		}
		if err := store(x, fv); err != nil {
			return err
		}
	}
	return nil
}

// fieldByIndex is reflect.Value.FieldByIndex, allocating embedded
// pointers on the way as json does.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, errFallback
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// typeInfo is what store needs to know about a type, computed once per
// type (as encoding/json caches its own).
type typeInfo struct {
	unmarshaler, textUnmarshaler bool
	// fields maps the JSON names of a struct's fields, promoted fields
	// of embedded structs included, to their index paths.
	fields map[string][]int
	// lower holds the lower-cased JSON names, to tell a key json would
	// match case-insensitively.
	lower map[string]bool
}

func (ti *typeInfo) folds(key string) bool {
	if len(ti.lower) == 0 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			// json folds some non-ASCII letters (the Kelvin sign, the
			// long s) into ASCII ones; let it decide.
			return true
		}
	}
	return ti.lower[strings.ToLower(key)]
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func typeInfoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	pt := reflect.PointerTo(t)
	ti := &typeInfo{
		unmarshaler:     pt.Implements(unmarshalerType),
		textUnmarshaler: pt.Implements(textUnmarshalerType),
	}
	if t.Kind() == reflect.Struct && !ti.unmarshaler && !ti.textUnmarshaler {
		ti.fields, ti.lower = layout.Fields(t)
	}
	actual, _ := typeInfos.LoadOrStore(t, ti)
	return actual.(*typeInfo)
}
