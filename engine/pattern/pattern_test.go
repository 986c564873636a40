package pattern

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
)

type errorAt struct {
	Code engine.Code
	Path string
}

func errorsAt(err error) []errorAt {
	var out []errorAt
	for _, e := range engine.As(err) {
		out = append(out, errorAt{e.Code, e.Path})
	}
	return out
}

// TestCompileErrors pins what Kyverno's policy validation rejects in a
// pattern (checked with the reference kyverno CLI, which skips the policy).
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name        string
		givePattern string
		want        []errorAt
	}{
		{
			name:        "add anchor",
			givePattern: `{"spec": {"containers": [{"+(image)": "x"}]}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "spec.containers[0].+(image)"}},
		},
		{
			name:        "add anchor under a condition",
			givePattern: `{"(data)": {"+(x)": "1"}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "(data).+(x)"}},
		},
		{
			name:        "existence anchor on a map",
			givePattern: `{"spec": {"^(containers)": {"a": "b"}}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "spec.^(containers)"}},
		},
		{
			name:        "existence anchor on an empty list",
			givePattern: `{"spec": {"^(containers)": []}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "spec.^(containers)"}},
		},
		{
			name:        "non-string label",
			givePattern: `{"metadata": {"labels": {"a": 1}}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "metadata.labels.a"}},
		},
		{
			name:        "null annotation in a pod template",
			givePattern: `{"spec": {"template": {"metadata": {"annotations": {"a": null}}}}}`,
			want:        []errorAt{{engine.CodeInvalidPattern, "spec.template.metadata.annotations.a"}},
		},
		{
			name:        "several problems sorted by path",
			givePattern: `{"z": {"+(a)": 1}, "a": [{"^(b)": "x"}], "metadata": {"annotations": {"k": true}}}`,
			want: []errorAt{
				{engine.CodeInvalidPattern, "a[0].^(b)"},
				{engine.CodeInvalidPattern, "metadata.annotations.k"},
				{engine.CodeInvalidPattern, "z.+(a)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(decode(t, tt.givePattern))
			if diff := cmp.Diff(tt.want, errorsAt(err)); diff != "" {
				t.Errorf("Compile(%s) errors mismatch (-want +got):\n%s", tt.givePattern, diff)
			}
			if diff := cmp.Diff(tt.want, errorsAt(Check(decode(t, tt.givePattern)))); diff != "" {
				t.Errorf("Check(%s) errors mismatch (-want +got):\n%s", tt.givePattern, diff)
			}
		})
	}
}

func TestCompileOneErrorIsAnError(t *testing.T) {
	_, err := Compile(decode(t, `{"+(a)": "1"}`))
	e, ok := err.(*engine.Error)
	if !ok {
		t.Fatalf("Compile(+(a)) = %T, want *engine.Error", err)
	}
	want := &engine.Error{Code: engine.CodeInvalidPattern, Path: "+(a)", Message: "unsupported anchor +(a)"}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Compile(+(a)) mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileUnknownType(t *testing.T) {
	give := map[string]any{"a": []any{map[string]string{"b": "c"}}}
	_, err := Compile(give)
	want := []errorAt{{engine.CodeInvalidPattern, "a[0]"}}
	if diff := cmp.Diff(want, errorsAt(err)); diff != "" {
		t.Errorf("Compile(%v) errors mismatch (-want +got):\n%s", give, diff)
	}
	got := CompileSubstituted(give).Validate(map[string]any{"a": []any{map[string]any{}}})
	wantResult := Result{Status: Fail, Path: "/a/0/", Message: "failed at '/a/0/', pattern contains unknown type"}
	if diff := cmp.Diff(wantResult, got); diff != "" {
		t.Errorf("Validate with unknown pattern type mismatch (-want +got):\n%s", diff)
	}
}

// TestCompileAccepts pins patterns Kyverno's policy validation lets through:
// it does not check operators, nor anchored labels keys.
func TestCompileAccepts(t *testing.T) {
	tests := []struct {
		name        string
		givePattern string
	}{
		{"all validate anchors", `{"(a)": 1, "=(b)": 2, "^(c)": [{"d": 1}], "X(e)": null, "<(f)": "g"}`},
		{"broken operator", `{"data": {"x": ">=abc", "y": "1-", "z": "!"}}`},
		{"add anchor text in a value", `{"data": {"x": "+(a)"}}`},
		{"existence anchor over scalars", `{"spec": {"^(a)": ["x"]}}`},
		{"non-string value under anchored labels", `{"metadata": {"=(labels)": {"a": 1}}}`},
		{"scalar pattern", `"x"`},
		{"null pattern", `null`},
		{"numbers", `{"a": 1, "b": 1.5, "c": -3, "d": 1e30}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compile(decode(t, tt.givePattern)); err != nil {
				t.Errorf("Compile(%s) = %v, want nil", tt.givePattern, err)
			}
		})
	}
}

// TestCompileGoNumbers: Go numeric types in a pattern are read as the number
// Kyverno's JSON decoding would give (integral ones as int64).
func TestCompileGoNumbers(t *testing.T) {
	tests := []struct {
		name         string
		give         any
		giveResource any
		want         Status
	}{
		{"int", 5, "5", Pass},
		{"int64", int64(5), "5", Pass},
		{"int32", int32(5), "5", Pass},
		{"uint8", uint8(5), "5", Pass},
		{"integral float64 is an int", 5.0, "5.0", Fail},
		{"fractional float64", 5.5, "5.5", Pass},
		{"float32", float32(0.5), "0.5", Pass},
		{"json.Number int", json.Number("5"), "5.0", Fail},
		{"json.Number float", json.Number("5.5"), "5.5", Pass},
		{"json.Number exponent stays a float", json.Number("5e0"), "5.0", Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(map[string]any{"x": tt.give})
			if err != nil {
				t.Fatalf("Compile(%v) = %v", tt.give, err)
			}
			if got := p.Validate(map[string]any{"x": tt.giveResource}).Status; got != tt.want {
				t.Errorf("Compile(%T %v).Validate(%q) = %v, want %v", tt.give, tt.give, tt.giveResource, got, tt.want)
			}
		})
	}
}

// TestValidateGoResourceTypes: resource numbers keep their Go type.
func TestValidateGoResourceTypes(t *testing.T) {
	tests := []struct {
		name         string
		giveResource any
		want         Status
	}{
		{"float64 prints as 5E+00", 5.0, Fail},
		{"int", 5, Pass},
		{"int64", int64(5), Pass},
		{"int8", int8(5), Pass},
		{"uint16", uint16(5), Pass},
		{"uint", uint(5), Pass},
		{"json.Number", json.Number("5"), Pass},
		{"json.Number float", json.Number("5.0"), Fail},
		{"float32", float32(5), Fail},
		{"unknown type", struct{}{}, Fail},
		{"map of strings is not a map", map[string]string{"a": "b"}, Fail},
	}
	p, err := Compile(map[string]any{"x": "*5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Validate(map[string]any{"x": tt.giveResource}).Status; got != tt.want {
				t.Errorf(`Validate({"x": %T %v}) against "*5" = %v, want %v`, tt.giveResource, tt.giveResource, got, tt.want)
			}
		})
	}
}

// TestPatternReuse: a compiled pattern is immutable; a wildcard expansion
// in one evaluation does not leak into the next.
func TestPatternReuse(t *testing.T) {
	p, err := Compile(decode(t, `{"metadata": {"labels": {"app*": "x"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []string{
		`{"metadata": {"labels": {"app1": "x"}}}`,
		`{"metadata": {"labels": {"app2": "x"}}}`,
	} {
		if got := p.Validate(decode(t, res)); got.Status != Pass {
			t.Errorf("Validate(%s) = %+v, want pass", res, got)
		}
	}
}

// TestValidateConcurrent shares one compiled pattern between goroutines
// (run with -race to check that Validate writes nothing shared).
func TestValidateConcurrent(t *testing.T) {
	p, err := Compile(decode(t, `{"metadata": {"labels": {"app*": "x", "(team-*)": "a"}}, "spec": {"containers": [{"(name)": "a*", "image": "!*:latest"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resources := []any{
		decode(t, `{"metadata": {"labels": {"app1": "x", "team-1": "a"}}, "spec": {"containers": [{"name": "ab", "image": "nginx:1"}]}}`),
		decode(t, `{"metadata": {"labels": {"app2": "y", "team-2": "a"}}, "spec": {"containers": [{"name": "ab", "image": "nginx:1"}]}}`),
	}
	want := []Status{Pass, Fail}
	done := make(chan []Status)
	for range 4 {
		go func() {
			var got []Status
			for range 50 {
				for _, r := range resources {
					got = append(got, p.Validate(r).Status)
				}
			}
			done <- got
		}()
	}
	for range 4 {
		got := <-done
		for i, s := range got {
			if s != want[i%2] {
				t.Errorf("Validate(resource %d) = %v, want %v", i%2, s, want[i%2])
				break
			}
		}
	}
}
