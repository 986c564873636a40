package condition

import (
	"encoding/json"
	"testing"
	"time"
)

var allOperators = []Operator{
	Equals, NotEquals, In, NotIn, AnyIn, AllIn, AnyNotIn, AllNotIn,
	GreaterThan, GreaterThanOrEquals, LessThan, LessThanOrEquals,
	DurationGreaterThan, DurationGreaterThanOrEquals, DurationLessThan, DurationLessThanOrEquals,
}

// fuzzOperand builds an operand of the kind picked by mode from the fuzzed
// string and number.
func fuzzOperand(s string, f float64, mode uint8) any {
	switch mode % 10 {
	case 0:
		return s
	case 1:
		return f
	case 2:
		return int64(f)
	case 3:
		return []any{s, f}
	case 4:
		return []any{s}
	case 5:
		return map[string]any{s: f}
	case 6:
		return s != ""
	case 7:
		return json.Number(s)
	case 8:
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
		return nil
	}
	return nil
}

// FuzzEvaluate checks that Evaluate never panics, whatever the operands.
func FuzzEvaluate(f *testing.F) {
	seeds := []struct {
		key, value string
		num        float64
	}{
		{"abc", "a*", 1},
		{"5", "1-10", 5},
		{"4", "-3-5", -3},
		{"1Gi", "1024Mi", 1024},
		{"1h", "60m", 3600},
		{"1.10.0", "1.9.0", 1.5},
		{"a", `["a", null]`, 0},
		{"1e999999", "1e-999999", 1e300},
		{"\xff", "?", -1e300},
	}
	for _, s := range seeds {
		f.Add(s.key, s.value, s.num, s.num, uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, ks, vs string, kf, vf float64, km, vm uint8) {
		key, value := fuzzOperand(ks, kf, km), fuzzOperand(vs, vf, vm)
		for _, op := range allOperators {
			Evaluate(key, op, value)
		}
	})
}

// FuzzDurationString checks durationString against time.ParseDuration,
// whose answer its quick test must never change.
func FuzzDurationString(f *testing.F) {
	for _, s := range []string{"", "0", "-0", "+0", "00", "1h", "1.5h", "2h45m", "300ms", "-1.5µs", "1μs", "1us", "10ns", "1", "1d", "h", ".s", "1e3s", "+5m", "5m0", "9223372036854775807ns", "9999999999h", "1hm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := durationString(s)
		want, err := time.ParseDuration(s)
		wantOK := err == nil && s != "0"
		if ok != wantOK || (ok && d != want) {
			t.Errorf("durationString(%q) = %v, %v, want %v, %v", s, d, ok, want, wantOK)
		}
	})
}
