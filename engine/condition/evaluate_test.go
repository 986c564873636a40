package condition

import (
	"encoding/json"
	"testing"
)

// evalRow is one condition and its expected outcome. Rows of one operator
// family share a table; giveOp names the operator as a policy would.
type evalRow struct {
	name      string
	giveKey   any
	giveOp    string
	giveValue any
	want      bool
}

func runEvalRows(t *testing.T, tests []evalRow) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := ParseOperator(tt.giveOp)
			if err != nil {
				t.Fatalf("ParseOperator(%q) error = %v", tt.giveOp, err)
			}
			if got := Evaluate(tt.giveKey, op, tt.giveValue); got != tt.want {
				t.Errorf("Evaluate(%#v, %s, %#v) = %v, want %v", tt.giveKey, op, tt.giveValue, got, tt.want)
			}
		})
	}
}

type (
	list = []any
	obj  = map[string]any
)

func TestEvaluateEquals(t *testing.T) {
	runEvalRows(t, []evalRow{
		// bool keys take only bools
		{name: "bool equal", giveKey: true, giveOp: "Equals", giveValue: true, want: true},
		{name: "bool differ", giveKey: true, giveOp: "Equals", giveValue: false, want: false},
		{name: "bool vs string", giveKey: true, giveOp: "Equals", giveValue: "true", want: false},
		{name: "bool vs nil", giveKey: false, giveOp: "Equals", giveValue: nil, want: false},
		{name: "alias Equal", giveKey: "a", giveOp: "Equal", giveValue: "a", want: true},

		// numbers
		{name: "float equal", giveKey: 1.0, giveOp: "Equals", giveValue: 1.0, want: true},
		{name: "float differ", giveKey: 1.0, giveOp: "Equals", giveValue: 2.0, want: false},
		{name: "float vs int64", giveKey: 1.0, giveOp: "Equals", giveValue: int64(1), want: true},
		{name: "fractional float never equals an int", giveKey: 1.5, giveOp: "Equals", giveValue: int64(1), want: false},
		{name: "int64 vs float", giveKey: int64(1), giveOp: "Equals", giveValue: 1.0, want: true},
		{name: "int64 vs fractional float", giveKey: int64(1), giveOp: "Equals", giveValue: 1.5, want: false},
		{name: "int vs int64", giveKey: 42, giveOp: "Equals", giveValue: int64(42), want: true},
		{name: "float vs numeric string", giveKey: 1.0, giveOp: "Equals", giveValue: "1", want: true},
		{name: "float vs decimal string", giveKey: 1.0, giveOp: "Equals", giveValue: "1.0", want: true},
		{name: "float vs exponent string", giveKey: 3.0, giveOp: "Equals", giveValue: "3e0", want: true},
		{name: "int64 vs decimal string does not parse as int", giveKey: int64(1), giveOp: "Equals", giveValue: "1.0", want: false},
		{name: "int64 vs int string", giveKey: int64(1), giveOp: "Equals", giveValue: "1", want: true},
		{name: "float vs non-numeric string", giveKey: 1.0, giveOp: "Equals", giveValue: "abc", want: false},
		{name: "float vs bool", giveKey: 1.0, giveOp: "Equals", giveValue: true, want: false},
		{name: "number key vs duration string is not a duration comparison", giveKey: 3600.0, giveOp: "Equals", giveValue: "1h", want: false},

		// strings: wildcards in the value only
		{name: "string equal", giveKey: "a", giveOp: "Equals", giveValue: "a", want: true},
		{name: "string differ", giveKey: "a", giveOp: "Equals", giveValue: "b", want: false},
		{name: "value star pattern", giveKey: "abc", giveOp: "Equals", giveValue: "a*", want: true},
		{name: "value question mark", giveKey: "abc", giveOp: "Equals", giveValue: "a?c", want: true},
		{name: "question mark needs one character", giveKey: "ac", giveOp: "Equals", giveValue: "a?c", want: false},
		{name: "key is never a pattern", giveKey: "a*", giveOp: "Equals", giveValue: "abc", want: false},
		{name: "host suffix pattern", giveKey: "api.mycompany.com", giveOp: "Equals", giveValue: "*.mycompany.com", want: true},
		{name: "empty strings", giveKey: "", giveOp: "Equals", giveValue: "", want: true},
		{name: "empty key matches star", giveKey: "", giveOp: "Equals", giveValue: "*", want: true},
		{name: "empty value matches only empty key", giveKey: "abc", giveOp: "Equals", giveValue: "", want: false},
		{name: "string vs number", giveKey: "x", giveOp: "Equals", giveValue: 1.0, want: false},
		{name: "numeric string key vs number is false", giveKey: "1", giveOp: "Equals", giveValue: 1.0, want: false},
		{name: "version string pattern", giveKey: "1.5.2", giveOp: "Equals", giveValue: "1.5.*", want: true},

		// durations come first
		{name: "durations", giveKey: "1h", giveOp: "Equals", giveValue: "60m", want: true},
		{name: "durations differ", giveKey: "1h", giveOp: "Equals", giveValue: "30m", want: false},
		{name: "duration vs seconds", giveKey: "1h", giveOp: "Equals", giveValue: 3600.0, want: true},
		{name: "duration vs int64 seconds", giveKey: "1h", giveOp: "Equals", giveValue: int64(3600), want: true},
		{name: "fractional seconds are truncated to whole nanoseconds, then scaled", giveKey: "1s", giveOp: "Equals", giveValue: 1.5, want: true},
		{name: "zero duration vs zero seconds", giveKey: "0s", giveOp: "Equals", giveValue: 0.0, want: true},
		{name: "literal 0 is not a duration", giveKey: "0", giveOp: "Equals", giveValue: "0s", want: false},
		{name: "0s vs literal 0", giveKey: "0s", giveOp: "Equals", giveValue: "0", want: false},
		{name: "0 vs 0 compare as quantities", giveKey: "0", giveOp: "Equals", giveValue: "0", want: true},
		{name: "duration vs bool", giveKey: "1h", giveOp: "Equals", giveValue: true, want: false},

		// quantities when the key is one
		{name: "binary quantities", giveKey: "1Gi", giveOp: "Equals", giveValue: "1024Mi", want: true},
		{name: "milli vs decimal", giveKey: "100m", giveOp: "Equals", giveValue: "0.1", want: true},
		{name: "plain number vs Ki", giveKey: "1024", giveOp: "Equals", giveValue: "1Ki", want: true},
		{name: "quantities differ", giveKey: "10Gi", giveOp: "Equals", giveValue: "1024Mi", want: false},
		{name: "values below 1n round up to 1n", giveKey: "1e-2000000000", giveOp: "Equals", giveValue: "1n", want: true},
		{name: "quantity key vs wildcard value is false", giveKey: "1", giveOp: "Equals", giveValue: "1*", want: false},
		{name: "quantity key vs star is false", giveKey: "100", giveOp: "Equals", giveValue: "*", want: false},
		{name: "non-quantity key uses wildcards", giveKey: "abc", giveOp: "Equals", giveValue: "*", want: true},

		// maps and lists: deep equality with exact types
		{name: "maps equal", giveKey: obj{"a": "b"}, giveOp: "Equals", giveValue: obj{"a": "b"}, want: true},
		{name: "maps differ", giveKey: obj{"a": "b"}, giveOp: "Equals", giveValue: obj{"b": "a"}, want: false},
		{name: "empty maps", giveKey: obj{}, giveOp: "Equals", giveValue: obj{}, want: true},
		{name: "map numbers must have the same type", giveKey: obj{"a": 1.0}, giveOp: "Equals", giveValue: obj{"a": int64(1)}, want: false},
		{name: "map vs string", giveKey: obj{"a": "b"}, giveOp: "Equals", giveValue: "x", want: false},
		{name: "map values are not patterns", giveKey: obj{"a": "bc"}, giveOp: "Equals", giveValue: obj{"a": "b*"}, want: false},
		{name: "lists equal", giveKey: list{"a", "b"}, giveOp: "Equals", giveValue: list{"a", "b"}, want: true},
		{name: "list order matters", giveKey: list{"a", "b"}, giveOp: "Equals", giveValue: list{"b", "a"}, want: false},
		{name: "list lengths", giveKey: list{"a", "b"}, giveOp: "Equals", giveValue: list{"a"}, want: false},
		{name: "empty lists", giveKey: list{}, giveOp: "Equals", giveValue: list{}, want: true},
		{name: "one-element list vs scalar", giveKey: list{"a"}, giveOp: "Equals", giveValue: "a", want: false},
		{name: "nested", giveKey: list{obj{"a": list{true, nil}}}, giveOp: "Equals", giveValue: list{obj{"a": list{true, nil}}}, want: true},

		// nil and other keys
		{name: "nil key", giveKey: nil, giveOp: "Equals", giveValue: nil, want: false},
		{name: "nil key vs empty string", giveKey: nil, giveOp: "Equals", giveValue: "", want: false},
		{name: "unsupported key type", giveKey: []string{"a"}, giveOp: "Equals", giveValue: []string{"a"}, want: false},
	})
}

func TestEvaluateNotEquals(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "strings equal", giveKey: "a", giveOp: "NotEquals", giveValue: "a", want: false},
		{name: "strings differ", giveKey: "a", giveOp: "NotEquals", giveValue: "b", want: true},
		{name: "alias NotEqual", giveKey: "a", giveOp: "NotEqual", giveValue: "b", want: true},
		{name: "value pattern matches", giveKey: "abc", giveOp: "NotEquals", giveValue: "a*", want: false},
		{name: "host not under domain", giveKey: "example.org", giveOp: "NotEquals", giveValue: "*.mycompany.com", want: true},
		{name: "service account set", giveKey: "builder", giveOp: "NotEquals", giveValue: "", want: true},
		{name: "service account empty", giveKey: "", giveOp: "NotEquals", giveValue: "", want: false},
		{name: "string vs number", giveKey: "x", giveOp: "NotEquals", giveValue: 1.0, want: true},
		{name: "durations equal", giveKey: "1h", giveOp: "NotEquals", giveValue: "60m", want: false},
		{name: "duration vs other seconds", giveKey: "2h", giveOp: "NotEquals", giveValue: 3600.0, want: true},
		{name: "quantities equal", giveKey: "1Ki", giveOp: "NotEquals", giveValue: "1024", want: false},
		{name: "quantities differ", giveKey: "1023", giveOp: "NotEquals", giveValue: "1Ki", want: true},
		{name: "quantity key vs non-quantity", giveKey: "1", giveOp: "NotEquals", giveValue: "1*", want: true},
		{name: "quantity key vs empty string", giveKey: "1", giveOp: "NotEquals", giveValue: "", want: true},
		{name: "bool differ", giveKey: true, giveOp: "NotEquals", giveValue: false, want: true},
		{name: "bool equal", giveKey: false, giveOp: "NotEquals", giveValue: false, want: false},
		{name: "bool vs string is not equal", giveKey: true, giveOp: "NotEquals", giveValue: "true", want: true},
		{name: "numbers equal", giveKey: 1.0, giveOp: "NotEquals", giveValue: int64(1), want: false},
		{name: "fractional float vs int", giveKey: 1.5, giveOp: "NotEquals", giveValue: int64(1), want: true},
		{name: "float vs unparsable string", giveKey: 1.0, giveOp: "NotEquals", giveValue: "abc", want: true},
		{name: "float vs numeric string", giveKey: 2.0, giveOp: "NotEquals", giveValue: "2.0", want: false},
		{name: "int64 vs decimal string", giveKey: int64(1), giveOp: "NotEquals", giveValue: "1.0", want: true},
		{name: "int64 vs fractional float", giveKey: int64(1), giveOp: "NotEquals", giveValue: 1.5, want: true},
		{name: "float vs bool", giveKey: 1.0, giveOp: "NotEquals", giveValue: false, want: true},
		{name: "maps equal", giveKey: obj{"a": "b"}, giveOp: "NotEquals", giveValue: obj{"a": "b"}, want: false},
		{name: "map vs string", giveKey: obj{"a": "b"}, giveOp: "NotEquals", giveValue: "x", want: true},
		{name: "lists differ", giveKey: list{"a", "b"}, giveOp: "NotEquals", giveValue: list{"b", "a"}, want: true},
		{name: "list vs string", giveKey: list{"a"}, giveOp: "NotEquals", giveValue: "a", want: true},
		{name: "nil key is false, not true", giveKey: nil, giveOp: "NotEquals", giveValue: "x", want: false},
		{name: "nil key and value", giveKey: nil, giveOp: "NotEquals", giveValue: nil, want: false},
		{name: "unsupported key type", giveKey: []string{"a"}, giveOp: "NotEquals", giveValue: "b", want: false},
	})
}

func TestEvaluateAnyIn(t *testing.T) {
	runEvalRows(t, []evalRow{
		// scalar key
		{name: "string in list", giveKey: "a", giveOp: "AnyIn", giveValue: list{"a", "b"}, want: true},
		{name: "string not in list", giveKey: "c", giveOp: "AnyIn", giveValue: list{"a", "b"}, want: false},
		{name: "list element is a pattern", giveKey: "kube-system", giveOp: "AnyIn", giveValue: list{"default", "kube-*"}, want: true},
		{name: "key is a pattern against list elements", giveKey: "kube-*", giveOp: "AnyIn", giveValue: list{"kube-system"}, want: true},
		{name: "empty list", giveKey: "a", giveOp: "AnyIn", giveValue: list{}, want: false},
		{name: "number key formatted with Sprint", giveKey: 1.0, giveOp: "AnyIn", giveValue: list{int64(1), int64(2)}, want: true},
		{name: "number key vs string element", giveKey: 1.5, giveOp: "AnyIn", giveValue: list{"1.5"}, want: true},
		{name: "large float formats with an exponent", giveKey: 100000000.0, giveOp: "AnyIn", giveValue: list{int64(100000000)}, want: false},
		{name: "large int64 formats plainly", giveKey: int64(100000000), giveOp: "AnyIn", giveValue: list{int64(100000000)}, want: true},
		{name: "bool key", giveKey: true, giveOp: "AnyIn", giveValue: list{"true", "false"}, want: true},
		{name: "string value is a pattern", giveKey: "abc", giveOp: "AnyIn", giveValue: "a*", want: true},
		{name: "scalar key is not a pattern against a string value", giveKey: "a*", giveOp: "AnyIn", giveValue: "abc", want: false},
		{name: "string value equal", giveKey: "kyverno", giveOp: "AnyIn", giveValue: "kyverno", want: true},
		{name: "range string", giveKey: "5", giveOp: "AnyIn", giveValue: "1-10", want: true},
		{name: "number in range string", giveKey: 5.0, giveOp: "AnyIn", giveValue: "1-10", want: true},
		{name: "out of range", giveKey: "11", giveOp: "AnyIn", giveValue: "1-10", want: false},
		{name: "range bounds are inclusive", giveKey: "10", giveOp: "AnyIn", giveValue: "1-10", want: true},
		{name: "quantity range", giveKey: "500Mi", giveOp: "AnyIn", giveValue: "1Mi-1Gi", want: true},
		{name: "negative range", giveKey: "-9", giveOp: "AnyIn", giveValue: "-10--8", want: true},
		{name: "tiny quantity in range", giveKey: "1e-2000000000", giveOp: "AnyIn", giveValue: "0-1", want: true},
		{name: "non-numeric key in range", giveKey: "abc", giveOp: "AnyIn", giveValue: "1-10", want: false},
		{name: "JSON array string", giveKey: "a", giveOp: "AnyIn", giveValue: `["a", "b"]`, want: true},
		{name: "JSON array elements match exactly", giveKey: "b", giveOp: "AnyIn", giveValue: `["a*"]`, want: false},
		{name: "JSON array of numbers is invalid", giveKey: "1", giveOp: "AnyIn", giveValue: `[1, 2]`, want: false},
		{name: "JSON object is invalid", giveKey: "a", giveOp: "AnyIn", giveValue: `{"a": 1}`, want: false},
		{name: "JSON null is an empty set", giveKey: "a", giveOp: "AnyIn", giveValue: "null", want: false},
		{name: "JSON null elements read as empty strings", giveKey: "", giveOp: "AnyIn", giveValue: `["a", null]`, want: true},
		{name: "scalar key vs number value is invalid", giveKey: "1", giveOp: "AnyIn", giveValue: 1.0, want: false},
		{name: "scalar key vs map value is invalid", giveKey: "a", giveOp: "AnyIn", giveValue: obj{"a": "b"}, want: false},
		{name: "empty string key", giveKey: "", giveOp: "AnyIn", giveValue: list{"a"}, want: false},

		// list key
		{name: "one of the keys in list", giveKey: list{"a", "x"}, giveOp: "AnyIn", giveValue: list{"a"}, want: true},
		{name: "none of the keys in list", giveKey: list{"x", "y"}, giveOp: "AnyIn", giveValue: list{"a"}, want: false},
		{name: "empty key list", giveKey: list{}, giveOp: "AnyIn", giveValue: list{"a"}, want: false},
		{name: "key element pattern", giveKey: list{"1*"}, giveOp: "AnyIn", giveValue: list{"1.1.1.1", "2.2.2.2"}, want: true},
		{name: "list key vs string value", giveKey: list{"a", "b"}, giveOp: "AnyIn", giveValue: "a", want: true},
		{name: "list key vs pattern value", giveKey: list{"kube-system", "default"}, giveOp: "AnyIn", giveValue: "kube-*", want: true},
		{name: "list key element pattern vs string value", giveKey: list{"kube-*"}, giveOp: "AnyIn", giveValue: "kube-system", want: true},
		{name: "list key vs number value", giveKey: list{"1", "2"}, giveOp: "AnyIn", giveValue: 2.0, want: true},
		{name: "list key vs bool value", giveKey: list{true}, giveOp: "AnyIn", giveValue: true, want: true},
		{name: "list key in range", giveKey: list{1.0, 5.0}, giveOp: "AnyIn", giveValue: "0-3", want: true},
		{name: "list key outside range", giveKey: list{1.0, 5.0}, giveOp: "AnyIn", giveValue: "7-10", want: false},
		{name: "decimal range", giveKey: list{1.002, 1.222}, giveOp: "AnyIn", giveValue: "1.001-10", want: true},
		{name: "list key vs JSON array string", giveKey: list{"x", "b"}, giveOp: "AnyIn", giveValue: `["a", "b"]`, want: true},
		{name: "list key vs invalid JSON array", giveKey: list{"a"}, giveOp: "AnyIn", giveValue: `[true]`, want: false},
		{name: "list key vs map value", giveKey: list{"a"}, giveOp: "AnyIn", giveValue: obj{}, want: false},
		{name: "nested elements formatted with Sprint", giveKey: list{list{"a"}}, giveOp: "AnyIn", giveValue: list{"[a]"}, want: true},

		// other keys
		{name: "map key", giveKey: obj{"a": "b"}, giveOp: "AnyIn", giveValue: list{"a"}, want: false},
		{name: "nil key", giveKey: nil, giveOp: "AnyIn", giveValue: list{nil}, want: false},
	})
}

func TestEvaluateAnyNotIn(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "string in list", giveKey: "a", giveOp: "AnyNotIn", giveValue: list{"a", "b"}, want: false},
		{name: "string not in list", giveKey: "c", giveOp: "AnyNotIn", giveValue: list{"a", "b"}, want: true},
		{name: "matched by pattern element", giveKey: "kube-system", giveOp: "AnyNotIn", giveValue: list{"default", "kube-*"}, want: false},
		{name: "string value equal", giveKey: "kyverno", giveOp: "AnyNotIn", giveValue: "kyverno", want: false},
		{name: "string value differs", giveKey: "kyverno", giveOp: "AnyNotIn", giveValue: "default", want: true},
		{name: "empty key not in list", giveKey: "", giveOp: "AnyNotIn", giveValue: list{"default", "kyverno"}, want: true},
		{name: "invalid value is false, not true", giveKey: "a", giveOp: "AnyNotIn", giveValue: 1.0, want: false},
		{name: "invalid JSON array is false", giveKey: "a", giveOp: "AnyNotIn", giveValue: `[1]`, want: false},
		{name: "scalar key out of range", giveKey: "5", giveOp: "AnyNotIn", giveValue: "1-3", want: true},
		{name: "scalar key in negative range", giveKey: "4", giveOp: "AnyNotIn", giveValue: "-3-5", want: false},
		{name: "one key not in list", giveKey: list{"a", "c"}, giveOp: "AnyNotIn", giveValue: list{"a"}, want: true},
		{name: "all keys in list", giveKey: list{"a"}, giveOp: "AnyNotIn", giveValue: list{"a", "b"}, want: false},
		{name: "empty key list", giveKey: list{}, giveOp: "AnyNotIn", giveValue: list{"a"}, want: false},
		{name: "single key equal to string value", giveKey: list{"a"}, giveOp: "AnyNotIn", giveValue: "a", want: false},
		{name: "keys partially matching string value", giveKey: list{"kube-system", "default"}, giveOp: "AnyNotIn", giveValue: "kube-system", want: true},
		{name: "all keys match pattern value", giveKey: list{"kube-system", "kube-public"}, giveOp: "AnyNotIn", giveValue: "kube-*", want: false},
		{name: "list key vs number value", giveKey: list{1.0, 2.0}, giveOp: "AnyNotIn", giveValue: 2.0, want: true},
		{name: "list key vs matching bool value", giveKey: list{true}, giveOp: "AnyNotIn", giveValue: true, want: false},
		{name: "some keys out of range", giveKey: list{1.0, 5.0, 11.0}, giveOp: "AnyNotIn", giveValue: "0-10", want: true},
		{name: "all keys in range", giveKey: list{1.0, 5.0, 7.0}, giveOp: "AnyNotIn", giveValue: "0-10", want: false},
		{name: "negative lower bound: Kyverno's rewrite makes a not-equal pattern", giveKey: list{"4"}, giveOp: "AnyNotIn", giveValue: "-3-5", want: true},
		{name: "key element pattern matches", giveKey: list{"2.2*"}, giveOp: "AnyNotIn", giveValue: list{"2.2.2.2"}, want: false},
		{name: "nil key", giveKey: nil, giveOp: "AnyNotIn", giveValue: list{"a"}, want: false},
		{name: "map key", giveKey: obj{}, giveOp: "AnyNotIn", giveValue: list{"a"}, want: false},
	})
}

func TestEvaluateAllIn(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "scalar key in list", giveKey: "a", giveOp: "AllIn", giveValue: list{"a", "b"}, want: true},
		{name: "scalar key not in list", giveKey: "c", giveOp: "AllIn", giveValue: list{"a", "b"}, want: false},
		{name: "scalar key in range", giveKey: 5.0, giveOp: "AllIn", giveValue: "1-10", want: true},
		{name: "scalar key vs number value is invalid", giveKey: 5.0, giveOp: "AllIn", giveValue: 5.0, want: false},
		{name: "all keys in list", giveKey: list{"a", "b"}, giveOp: "AllIn", giveValue: list{"a", "b", "c"}, want: true},
		{name: "one key missing", giveKey: list{"a", "d"}, giveOp: "AllIn", giveValue: list{"a", "b", "c"}, want: false},
		{name: "empty key list holds", giveKey: list{}, giveOp: "AllIn", giveValue: list{"a"}, want: true},
		{name: "empty key list vs range holds", giveKey: list{}, giveOp: "AllIn", giveValue: "1-10", want: true},
		{name: "patterns in value", giveKey: list{"2.1.1.1", "2.2.2.2"}, giveOp: "AllIn", giveValue: list{"2*"}, want: true},
		{name: "pattern in key", giveKey: list{"1*"}, giveOp: "AllIn", giveValue: list{"1.1.1.1", "2.2.2.2"}, want: true},
		{name: "single key equal to string value", giveKey: list{"a"}, giveOp: "AllIn", giveValue: "a", want: true},
		{name: "keys vs one string value", giveKey: list{"1.1.1.1", "5.5.5.5"}, giveOp: "AllIn", giveValue: "5.5.5.5", want: false},
		{name: "all keys in range", giveKey: list{3.0, 2.0}, giveOp: "AllIn", giveValue: "1-10", want: true},
		{name: "keys out of range", giveKey: list{3.0, 2.0}, giveOp: "AllIn", giveValue: "5-10", want: false},
		{name: "JSON array string", giveKey: list{"a", "b"}, giveOp: "AllIn", giveValue: `["a", "b", "c"]`, want: true},
		{name: "list key vs number value is invalid, unlike AnyIn", giveKey: list{"2"}, giveOp: "AllIn", giveValue: 2.0, want: false},
		{name: "nil key", giveKey: nil, giveOp: "AllIn", giveValue: list{"a"}, want: false},
	})
}

func TestEvaluateAllNotIn(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "scalar key not in list", giveKey: "a", giveOp: "AllNotIn", giveValue: list{"b"}, want: true},
		{name: "scalar key matched by pattern", giveKey: "abc", giveOp: "AllNotIn", giveValue: list{"a*"}, want: false},
		{name: "scalar number key", giveKey: 5.0, giveOp: "AllNotIn", giveValue: list{int64(1), int64(2)}, want: true},
		{name: "scalar key vs invalid value", giveKey: "a", giveOp: "AllNotIn", giveValue: 1.0, want: false},
		{name: "scalar key out of range", giveKey: 5.5, giveOp: "AllNotIn", giveValue: "6-10", want: true},
		{name: "scalar key in range", giveKey: "5", giveOp: "AllNotIn", giveValue: "1-6", want: false},
		{name: "no key in list", giveKey: list{"a", "b"}, giveOp: "AllNotIn", giveValue: list{"c"}, want: true},
		{name: "one key in list", giveKey: list{"a", "c"}, giveOp: "AllNotIn", giveValue: list{"c"}, want: false},
		{name: "empty key list holds", giveKey: list{}, giveOp: "AllNotIn", giveValue: list{"a"}, want: true},
		{name: "key patterns", giveKey: list{"7*", "6*"}, giveOp: "AllNotIn", giveValue: list{"1.1.1.1"}, want: true},
		{name: "single key equal to string value", giveKey: list{"a"}, giveOp: "AllNotIn", giveValue: "a", want: false},
		{name: "keys vs other string value", giveKey: list{"1.1.1.1", "4.4.4.4"}, giveOp: "AllNotIn", giveValue: "2.2.2.2", want: true},
		{name: "keys out of range", giveKey: list{3.0, 2.0}, giveOp: "AllNotIn", giveValue: "5-10", want: true},
		{name: "a key in range", giveKey: list{2.0, 6.0}, giveOp: "AllNotIn", giveValue: "5-10", want: false},
		{name: "list key vs number value is invalid", giveKey: list{"1"}, giveOp: "AllNotIn", giveValue: 5.0, want: false},
		{name: "nil key", giveKey: nil, giveOp: "AllNotIn", giveValue: list{"a"}, want: false},
	})
}

func TestEvaluateInLegacy(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "scalar key in list", giveKey: "a", giveOp: "In", giveValue: list{"a", "b"}, want: true},
		{name: "list elements are patterns", giveKey: "1.1.1.1", giveOp: "In", giveValue: list{"1*"}, want: true},
		{name: "number key", giveKey: 1.0, giveOp: "In", giveValue: list{int64(1), int64(2)}, want: true},
		{name: "string value pattern", giveKey: "abc", giveOp: "In", giveValue: "a*", want: true},
		{name: "JSON array string", giveKey: "a", giveOp: "In", giveValue: `["a", "b"]`, want: true},
		{name: "plain string value that does not match is invalid", giveKey: "a", giveOp: "In", giveValue: "b", want: false},
		{name: "NotIn with that value is false too", giveKey: "a", giveOp: "NotIn", giveValue: "b", want: false},
		{name: "scalar key not in list", giveKey: "c", giveOp: "NotIn", giveValue: list{"a"}, want: true},
		{name: "scalar key in list, NotIn", giveKey: "a", giveOp: "NotIn", giveValue: list{"a"}, want: false},
		{name: "no range support", giveKey: "5", giveOp: "In", giveValue: "1-10", want: false},
		{name: "subset", giveKey: list{"a", "b"}, giveOp: "In", giveValue: list{"a", "b", "c"}, want: true},
		{name: "not a subset", giveKey: list{"a", "x"}, giveOp: "In", giveValue: list{"a", "b"}, want: false},
		{name: "not a subset, NotIn", giveKey: list{"a", "x"}, giveOp: "NotIn", giveValue: list{"a", "b"}, want: true},
		{name: "subset, NotIn", giveKey: list{"a"}, giveOp: "NotIn", giveValue: list{"a", "b"}, want: false},
		{name: "set elements match exactly", giveKey: list{"a*"}, giveOp: "In", giveValue: list{"abc"}, want: false},
		{name: "non-string key element (Kyverno panics)", giveKey: list{1.0}, giveOp: "In", giveValue: list{"1"}, want: false},
		{name: "non-string value element is invalid", giveKey: list{"a"}, giveOp: "In", giveValue: list{"a", 1.0}, want: false},
		{name: "non-string value element is invalid for NotIn", giveKey: list{"x"}, giveOp: "NotIn", giveValue: list{"a", 1.0}, want: false},
		{name: "single key equal to string value", giveKey: list{"a"}, giveOp: "In", giveValue: "a", want: true},
		{name: "single key equal to string value is also NotIn", giveKey: list{"a"}, giveOp: "NotIn", giveValue: "a", want: true},
		{name: "list key vs JSON array string", giveKey: list{"a", "b"}, giveOp: "In", giveValue: `["a", "b"]`, want: true},
		{name: "list key vs plain string is invalid", giveKey: list{"a"}, giveOp: "NotIn", giveValue: "b", want: false},
		{name: "empty key list is a subset", giveKey: list{}, giveOp: "In", giveValue: list{"a"}, want: true},
		{name: "nil key", giveKey: nil, giveOp: "NotIn", giveValue: list{"a"}, want: false},
	})
}

func TestEvaluateNumeric(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "numbers greater", giveKey: 10.0, giveOp: "GreaterThan", giveValue: 5.0, want: true},
		{name: "numbers equal not greater", giveKey: 5.0, giveOp: "GreaterThan", giveValue: 5.0, want: false},
		{name: "numbers equal greater or equal", giveKey: 5.0, giveOp: "GreaterThanOrEquals", giveValue: 5.0, want: true},
		{name: "numbers less", giveKey: 1.0, giveOp: "LessThan", giveValue: 1.5, want: true},
		{name: "numbers less or equal", giveKey: 1.0, giveOp: "LessThanOrEquals", giveValue: 1.0, want: true},
		{name: "negative", giveKey: -5.0, giveOp: "LessThan", giveValue: 1.0, want: true},
		{name: "int64 vs float", giveKey: int64(1), giveOp: "GreaterThanOrEquals", giveValue: 1.0, want: true},
		{name: "int vs int64", giveKey: 10, giveOp: "GreaterThan", giveValue: int64(1), want: true},
		{name: "numeric string key vs number", giveKey: "100", giveOp: "GreaterThan", giveValue: 50.0, want: true},
		{name: "numeric strings", giveKey: "50", giveOp: "LessThan", giveValue: "100", want: true},
		{name: "number vs numeric string", giveKey: 100.0, giveOp: "GreaterThan", giveValue: "10", want: true},
		{name: "number vs non-numeric string", giveKey: 1.0, giveOp: "GreaterThan", giveValue: "abc", want: false},
		{name: "number vs bool", giveKey: 1.0, giveOp: "GreaterThan", giveValue: true, want: false},
		{name: "number vs nil", giveKey: 1.0, giveOp: "GreaterThan", giveValue: nil, want: false},
		{name: "quantities", giveKey: "1Gi", giveOp: "GreaterThan", giveValue: "1000Mi", want: true},
		{name: "milli quantity vs decimal", giveKey: "500m", giveOp: "GreaterThanOrEquals", giveValue: "0.5", want: true},
		{name: "plain number vs Ki", giveKey: "1025", giveOp: "GreaterThan", giveValue: "1Ki", want: true},
		{name: "memory under limit", giveKey: "512Mi", giveOp: "LessThan", giveValue: "1Gi", want: true},
		{name: "exponent quantity", giveKey: "1e3", giveOp: "GreaterThan", giveValue: "999", want: true},
		{name: "huge exponent quantity stays fast", giveKey: "1e2147483647", giveOp: "GreaterThan", giveValue: "1Gi", want: true},
		{name: "decimal strings compare as quantities, not versions", giveKey: "1.5", giveOp: "LessThan", giveValue: "1.10", want: false},
		{name: "quantity key vs number is false", giveKey: "1Ki", giveOp: "GreaterThan", giveValue: 1000.0, want: false},
		{name: "durations", giveKey: "1h", giveOp: "GreaterThan", giveValue: "30m", want: true},
		{name: "duration vs equal seconds", giveKey: "1h", giveOp: "GreaterThan", giveValue: 3600.0, want: false},
		{name: "duration vs equal seconds or equal", giveKey: "1h", giveOp: "GreaterThanOrEquals", giveValue: 3600.0, want: true},
		{name: "seconds vs duration", giveKey: 3600.0, giveOp: "GreaterThan", giveValue: "30m", want: true},
		{name: "int64 seconds vs duration", giveKey: int64(3600), giveOp: "LessThan", giveValue: "1h", want: false},
		{name: "duration vs int64 seconds", giveKey: "2h", giveOp: "GreaterThan", giveValue: int64(3600), want: true},
		{name: "literal 0 key reads as a number against a duration", giveKey: "0", giveOp: "LessThan", giveValue: "1h", want: true},
		{name: "versions", giveKey: "1.10.0", giveOp: "GreaterThan", giveValue: "1.9.0", want: true},
		{name: "versions equal", giveKey: "1.5.5", giveOp: "GreaterThanOrEquals", giveValue: "1.5.5", want: true},
		{name: "pre-release sorts before release", giveKey: "1.2.3-alpha", giveOp: "LessThan", giveValue: "1.2.3", want: true},
		{name: "v prefix is not a version", giveKey: "v1.2.3", giveOp: "GreaterThan", giveValue: "1.0.0", want: false},
		{name: "version vs two-part string", giveKey: "1.2.3", giveOp: "GreaterThan", giveValue: "1.2", want: false},
		{name: "version vs number", giveKey: "1.2.3", giveOp: "GreaterThan", giveValue: 1.0, want: false},
		{name: "two-part key reads as a float", giveKey: "1.2", giveOp: "GreaterThan", giveValue: "1.1.0", want: false},
		{name: "non-numeric string key", giveKey: "abc", giveOp: "GreaterThan", giveValue: 1.0, want: false},
		{name: "bool key", giveKey: true, giveOp: "GreaterThan", giveValue: 0.0, want: false},
		{name: "nil key", giveKey: nil, giveOp: "LessThan", giveValue: 5.0, want: false},
		{name: "list key", giveKey: list{1.0}, giveOp: "GreaterThan", giveValue: 0.0, want: false},
	})
}

func TestEvaluateDuration(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "strings greater", giveKey: "2h", giveOp: "DurationGreaterThan", giveValue: "1h", want: true},
		{name: "strings equal not greater", giveKey: "60m", giveOp: "DurationGreaterThan", giveValue: "1h", want: false},
		{name: "strings equal greater or equal", giveKey: "1h", giveOp: "DurationGreaterThanOrEquals", giveValue: "60m", want: true},
		{name: "strings less", giveKey: "30m", giveOp: "DurationLessThan", giveValue: "1h", want: true},
		{name: "string vs seconds", giveKey: "1h", giveOp: "DurationLessThanOrEquals", giveValue: 3600.0, want: true},
		{name: "seconds vs string", giveKey: 120.0, giveOp: "DurationGreaterThan", giveValue: "1m", want: true},
		{name: "int64 seconds", giveKey: int64(60), giveOp: "DurationGreaterThanOrEquals", giveValue: int64(60), want: true},
		{name: "int seconds", giveKey: 120, giveOp: "DurationGreaterThan", giveValue: 60, want: true},
		{name: "fractional seconds truncate", giveKey: 1.5, giveOp: "DurationGreaterThan", giveValue: 1.0, want: false},
		{name: "literal 0 is a duration here", giveKey: "0", giveOp: "DurationLessThan", giveValue: "1s", want: true},
		{name: "bad key", giveKey: "abc", giveOp: "DurationGreaterThan", giveValue: "1h", want: false},
		{name: "bad value", giveKey: "1h", giveOp: "DurationGreaterThan", giveValue: "abc", want: false},
		{name: "days are not a unit", giveKey: "2d", giveOp: "DurationGreaterThan", giveValue: "1h", want: false},
		{name: "numeric string without unit", giveKey: "10", giveOp: "DurationGreaterThan", giveValue: 1.0, want: false},
		{name: "bool key", giveKey: true, giveOp: "DurationGreaterThan", giveValue: false, want: false},
		{name: "bool value", giveKey: "1h", giveOp: "DurationGreaterThan", giveValue: true, want: false},
		{name: "nil key", giveKey: nil, giveOp: "DurationLessThan", giveValue: "1h", want: false},
	})
}

func TestEvaluateOtherNumberTypes(t *testing.T) {
	runEvalRows(t, []evalRow{
		{name: "json.Number key equals float", giveKey: json.Number("1"), giveOp: "Equals", giveValue: 1.0, want: true},
		{name: "json.Number value", giveKey: 2.0, giveOp: "GreaterThan", giveValue: json.Number("1.5"), want: true},
		{name: "json.Number formats like a float", giveKey: json.Number("100000000"), giveOp: "AnyIn", giveValue: list{"1e+08"}, want: true},
		{name: "json.Number list elements", giveKey: list{json.Number("1")}, giveOp: "Equals", giveValue: list{1.0}, want: true},
		{name: "json.Number set elements", giveKey: list{json.Number("2")}, giveOp: "AllIn", giveValue: list{"2"}, want: true},
		{name: "int key in range", giveKey: 5, giveOp: "AnyIn", giveValue: "1-10", want: true},
		{name: "int key vs duration", giveKey: 3600, giveOp: "GreaterThanOrEquals", giveValue: "1h", want: true},
		{name: "float32 key is formatted for set operators", giveKey: float32(0.5), giveOp: "AnyIn", giveValue: list{"0.5"}, want: true},
		{name: "float32 key is unsupported for Equals", giveKey: float32(0.5), giveOp: "Equals", giveValue: 0.5, want: false},
	})
}

func TestEvaluateUnknownOperator(t *testing.T) {
	tests := []struct {
		name string
		give Operator
	}{
		{name: "empty", give: ""},
		{name: "uncanonical alias", give: "Equal"},
		{name: "lower case", give: "equals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Evaluate("a", tt.give, "a"); got {
				t.Errorf("Evaluate(%q, %q, %q) = %v, want false", "a", tt.give, "a", got)
			}
		})
	}
}
