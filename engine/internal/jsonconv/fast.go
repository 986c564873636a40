package jsonconv

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The generated converters call these for the types whose UnmarshalJSON
// the Pod reaches most (ports and probes, resources, timestamps): each
// stores v as dst.UnmarshalJSON(json.Marshal(v)) does, without the JSON
// text, for the values where that result is plain (a string json writes
// back as it is, an integer in range), and reports false, with dst
// untouched, for the others, which take the generic path.
// FuzzUnmarshalerFast compares them with UnmarshalJSON.

// intOrStringFast is IntOrString.UnmarshalJSON of a string (json decodes
// the marshaled text of valid UTF-8 back into the same string) or of an
// integer that fits an int32.
func intOrStringFast(v any, dst *intstr.IntOrString) bool {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return false // json.Marshal writes U+FFFD for the invalid bytes
		}
		dst.Type = intstr.String
		dst.StrVal = x
		return true
	case int64, int, float64:
		i, ok := integer(x)
		if !ok || i < math.MinInt32 || i > math.MaxInt32 {
			return false
		}
		dst.Type = intstr.Int
		dst.IntVal = int32(i)
		return true
	}
	return false
}

// quantityFast is Quantity.UnmarshalJSON of a string json writes between
// quotes as it is: ParseQuantity of the string without its surrounding
// spaces. A string ParseQuantity rejects is left to UnmarshalJSON.
func quantityFast(v any, dst *resource.Quantity) bool {
	s, ok := v.(string)
	if !ok || !plain(s) {
		return false
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return false
	}
	*dst = q
	return true
}

// timeFast is metav1.Time.UnmarshalJSON of a string json writes between
// quotes as it is: time.Parse with RFC 3339, in local time.
func timeFast(v any, dst *metav1.Time) bool {
	s, ok := v.(string)
	if !ok || !plain(s) {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return false
	}
	dst.Time = t.Local()
	return true
}
