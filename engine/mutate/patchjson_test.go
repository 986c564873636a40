package mutate

import (
	"encoding/json"
	"math"
	"testing"
)

// TestMarshalPatchIsJSONMarshal pins MarshalPatch's bytes to those of
// json.Marshal, for the values it writes itself and those it leaves to
// json.
func TestMarshalPatchIsJSONMarshal(t *testing.T) {
	tests := []struct {
		name string
		give []Operation
	}{
		{"add a map", []Operation{{Op: "add", Path: "/metadata/annotations", Value: map[string]any{"b": "2", "a": "1"}}}},
		{"add null", []Operation{{Op: "add", Path: "/a", Value: nil}}},
		{"replace null", []Operation{{Op: "replace", Path: "/a"}}},
		{"remove", []Operation{{Op: "remove", Path: "/a/0"}}},
		{"remove with a value", []Operation{{Op: "remove", Path: "/a", Value: "x"}}},
		{"test without a value", []Operation{{Op: "test", Path: "/a"}}},
		{"escaped path", []Operation{{Op: "add", Path: "/metadata/annotations/a~1b~0c", Value: "v"}}},
		{"html and control characters", []Operation{{Op: "add", Path: "/<a>&\"\\", Value: "\x00\x1f\b\f\n\r\t<script>&amp;"}}},
		{"unicode", []Operation{{Op: "add", Path: "/é", Value: "日本\u2028\u2029\U0001F600"}}},
		{"invalid UTF-8", []Operation{{Op: "add\xff", Path: "/\xc3", Value: map[string]any{"\xed\xa0\x80": "a\xffb"}}}},
		{"numbers", []Operation{{Op: "add", Path: "/n", Value: []any{0.0, math.Copysign(0, -1), 1.0, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, 5e-324, math.MaxFloat64, int64(-7), int64(math.MaxInt64)}}}},
		{"booleans and nulls", []Operation{{Op: "add", Path: "/b", Value: []any{true, false, nil, map[string]any(nil), []any(nil), []any{}, map[string]any{}}}}},
		{"nested", []Operation{{Op: "add", Path: "/spec/containers/1", Value: map[string]any{"name": "c", "ports": []any{map[string]any{"containerPort": 80.0}}, "env": []any{}}}}},
		{"several", []Operation{{Op: "remove", Path: "/a"}, {Op: "add", Path: "/b", Value: "x"}, {Op: "replace", Path: "/c", Value: 1.0}}},
		{"an int (left to json)", []Operation{{Op: "add", Path: "/a", Value: []any{1, "x"}}}},
		{"a json.Number (left to json)", []Operation{{Op: "add", Path: "/a", Value: json.Number("12.50")}}},
		{"a typed map (left to json)", []Operation{{Op: "add", Path: "/a", Value: map[string]string{"<": ">"}}}},
		{"a float32 (left to json)", []Operation{{Op: "add", Path: "/a", Value: float32(0.1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.give)
			if err != nil {
				t.Fatalf("json.Marshal(%v) = %v", tt.give, err)
			}
			got, err := MarshalPatch(tt.give)
			if err != nil {
				t.Fatalf("MarshalPatch(%v) = %v, want %s", tt.give, err, want)
			}
			if string(got) != string(want) {
				t.Errorf("MarshalPatch(%v) = %s, want %s", tt.give, got, want)
			}
		})
	}
}

// TestMarshalPatchErrors: numbers JSON cannot write fail as in
// json.Marshal.
func TestMarshalPatchErrors(t *testing.T) {
	tests := []struct {
		name string
		give []Operation
	}{
		{"NaN", []Operation{{Op: "add", Path: "/a", Value: math.NaN()}}},
		{"+Inf in a map", []Operation{{Op: "add", Path: "/a", Value: map[string]any{"x": math.Inf(1)}}}},
		{"-Inf in a list", []Operation{{Op: "add", Path: "/a", Value: []any{"x", math.Inf(-1)}}}},
		{"invalid json.Number", []Operation{{Op: "add", Path: "/a", Value: json.Number("1x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, want := json.Marshal(tt.give)
			got, err := MarshalPatch(tt.give)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("MarshalPatch(%v) = %s, %v, want error %v", tt.give, got, err, want)
			}
		})
	}
}

// FuzzMarshalPatch checks MarshalPatch's bytes against json.Marshal's, for
// an operation whose op and path are any bytes and whose value is any
// JSON document, or the raw text as a string.
func FuzzMarshalPatch(f *testing.F) {
	f.Add("add", "/metadata/annotations", `{"a":"<b>&","n":[1,2.5,1e21,-0,null,true]}`)
	f.Add("remove", "/a~1b", ``)
	f.Add("replace", "/\xff\u2028", `"\ud800x\u2029"`)
	f.Fuzz(func(t *testing.T, op, path, value string) {
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			v = value
		}
		ops := []Operation{{Op: op, Path: path, Value: v}, {Op: op, Path: path}}
		want, werr := json.Marshal(ops)
		got, err := MarshalPatch(ops)
		if (err == nil) != (werr == nil) || string(got) != string(want) {
			t.Fatalf("MarshalPatch(%q, %q, %q) = %s, %v, want %s, %v", op, path, value, got, err, want, werr)
		}
	})
}
