package kyvernocel_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// show prints a lookup's result so that the two maps' results compare.
func show(v ref.Val, found bool) string {
	switch {
	case v == nil:
		return fmt.Sprintf("<nil> found=%v", found)
	case types.IsError(v):
		return fmt.Sprintf("error %q found=%v", v.(*types.Err).String(), found)
	}
	return fmt.Sprintf("%s %v found=%v", v.Type().TypeName(), v.Value(), found)
}

// kyvernoVariables is `variables` as Kyverno builds it
// (pkg/cel/policies/vpol/compiler: a lazy.MapValue with one entry per
// name of its map of compiled variables, the last declaration of a name),
// and the same with kyvernocel.Variables. Each variable's value is its
// name and declaration index; evaluations counts the evaluations.
func kyvernoVariables(declared []string, evaluations map[string]int) (*lazy.MapValue, *kyvernocel.Variables) {
	last := map[string]int{}
	var names []string
	for i, n := range declared {
		if _, ok := last[n]; !ok {
			names = append(names, n)
		}
		last[n] = i
	}
	value := func(prefix string, i int) ref.Val {
		evaluations[fmt.Sprintf("%s %d", prefix, i)]++
		return types.String(fmt.Sprintf("%s#%d", declared[i], i))
	}
	want := lazy.NewMapValue(kyvernocel.VariablesType)
	for _, n := range names {
		i := last[n]
		want.Append(n, func(*lazy.MapValue) ref.Val { return value("lazy", i) })
	}
	got := &kyvernocel.Variables{}
	got.Reset(kyvernocel.NewVariableNames(declared), kyvernocel.VariableFunc(func(i int) ref.Val { return value("verdict", i) }))
	return want, got
}

// TestVariablesAsLazyMapValue compares Variables with Kubernetes'
// lazy.MapValue, which Kyverno's `variables` is: the same lookups
// (escaped names unescaped, names that do not unescape refused, a name
// declared twice is its last declaration), sizes, iteration and
// conversions.
func TestVariablesAsLazyMapValue(t *testing.T) {
	declared := []string{"a", "a-b", "a.b", "if", "x__y__z", "a__b", "dup", "dup", "__", "_x_"}
	tests := []struct {
		name string
		give ref.Val
	}{
		{name: "plain", give: types.String("a")},
		{name: "escaped dash", give: types.String("a__dash__b")},
		{name: "escaped dot", give: types.String("a__dot__b")},
		{name: "unescaped dash", give: types.String("a-b")},
		{name: "reserved word escaped", give: types.String("__if__")},
		{name: "reserved word", give: types.String("if")},
		{name: "unknown escape", give: types.String("x__y__z")},
		{name: "underscores without escape", give: types.String("a__b")},
		{name: "escaped underscores", give: types.String("a__underscores__b")},
		{name: "two underscores", give: types.String("__")},
		{name: "single underscores", give: types.String("_x_")},
		{name: "declared twice", give: types.String("dup")},
		{name: "missing", give: types.String("missing")},
		{name: "empty", give: types.String("")},
		{name: "int key", give: types.Int(1)},
		{name: "error key", give: types.NewErr("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evaluations := map[string]int{}
			want, got := kyvernoVariables(declared, evaluations)
			wantFind, gotFind := show(want.Find(tt.give)), show(got.Find(tt.give))
			if gotFind != wantFind {
				t.Errorf("Find(%v) = %s, want %s", tt.give, gotFind, wantFind)
			}
			if g, w := show(got.Get(tt.give), true), show(want.Get(tt.give), true); g != w {
				t.Errorf("Get(%v) = %s, want %s", tt.give, g, w)
			}
			if g, w := show(got.Contains(tt.give), true), show(want.Contains(tt.give), true); g != w {
				t.Errorf("Contains(%v) = %s, want %s", tt.give, g, w)
			}
			// Each variable is evaluated once, however often it is read.
			for k, n := range evaluations {
				if n != 1 {
					t.Errorf("evaluations of %s = %d, want 1", k, n)
				}
			}
		})
	}
}

func TestVariablesAsLazyMapValueWhole(t *testing.T) {
	declared := []string{"a", "b", "dup", "c", "dup"}
	want, got := kyvernoVariables(declared, map[string]int{})
	iterate := func(it traits.Iterator) []string {
		var out []string
		for it.HasNext() == types.True {
			out = append(out, show(it.Next(), true))
		}
		return out
	}
	_, gotNativeErr := got.ConvertToNative(reflect.TypeFor[map[string]any]())
	_, wantNativeErr := want.ConvertToNative(reflect.TypeFor[map[string]any]())
	gotSummary := []string{
		show(got.Size(), true),
		strings.Join(iterate(got.Iterator()), ", "),
		got.Type().TypeName(),
		show(got.ConvertToType(types.TypeType), true),
		show(got.ConvertToType(types.StringType), true),
		fmt.Sprint(gotNativeErr),
		show(got.Equal(got), true),
		show(got.Equal(types.String("a")), true),
	}
	wantSummary := []string{
		show(want.Size(), true),
		strings.Join(iterate(want.Iterator()), ", "),
		want.Type().TypeName(),
		show(want.ConvertToType(types.TypeType), true),
		show(want.ConvertToType(types.StringType), true),
		fmt.Sprint(wantNativeErr),
		show(want.Equal(want), true),
		show(want.Equal(types.String("a")), true),
	}
	if diff := cmp.Diff(wantSummary, gotSummary); diff != "" {
		t.Errorf("Variables(%v) (-lazy.MapValue +Variables):\n%s", declared, diff)
	}
	if got.ConvertToType(got.Type()) != got {
		t.Errorf("ConvertToType(own type) = another value, want the variables")
	}
}

// TestVariablesReadOwnName: a variable whose expression reads its own
// name (a name declared twice, the second reading the first) is an error,
// where Kyverno's lazy map recurses until the process runs out of stack.
func TestVariablesReadOwnName(t *testing.T) {
	vars := &kyvernocel.Variables{}
	vars.Reset(kyvernocel.NewVariableNames([]string{"a", "a"}), kyvernocel.VariableFunc(func(int) ref.Val {
		return vars.Get(types.String("a"))
	}))
	got := vars.Get(types.String("a"))
	const want = `variable "a" is read by its own expression`
	if !types.IsError(got) || got.(*types.Err).String() != want {
		t.Errorf("Get(a) = %v, want error %q", got, want)
	}
}

// TestVariablesReset: a reset Variables evaluates its variables again,
// with the new names and function.
func TestVariablesReset(t *testing.T) {
	vars := &kyvernocel.Variables{}
	vars.Reset(kyvernocel.NewVariableNames([]string{"a", "b"}), kyvernocel.VariableFunc(func(i int) ref.Val { return types.Int(i) }))
	if got := vars.Get(types.String("b")); got != types.Int(1) {
		t.Fatalf("Get(b) = %v, want 1", got)
	}
	vars.Reset(kyvernocel.NewVariableNames([]string{"b"}), kyvernocel.VariableFunc(func(i int) ref.Val { return types.Int(10 + i) }))
	tests := []struct {
		give string
		want string
	}{
		{give: "b", want: show(types.Int(10), true)},
		{give: "a", want: show(nil, false)},
	}
	for _, tt := range tests {
		if got := show(vars.Find(types.String(tt.give))); got != tt.want {
			t.Errorf("Find(%s) after Reset = %s, want %s", tt.give, got, tt.want)
		}
	}
}
