package jsonconv

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// TestStorePodTypicalPod checks that the generated converter converts a
// typical Pod by itself (no fallback) and equals the round trip.
func TestStorePodTypicalPod(t *testing.T) {
	v := decodeJSON(t, typicalPod)
	var got corev1.Pod
	if err := storeCorev1Pod(v, &got); err != nil {
		t.Fatalf("storeCorev1Pod(typical Pod) = %v, want nil (no fallback)", err)
	}
	want, err := roundTrip[corev1.Pod](v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &got); diff != "" || !reflect.DeepEqual(want, &got) {
		t.Errorf("storeCorev1Pod(typical Pod) differs from the JSON round trip (-want +got):\n%s", diff)
	}
}

// TestDecodePodMatchesRoundTrip runs roundTripCases through DecodePod:
// the round trip's value or its error, and the generated converter falls
// back exactly when the reflection converter does.
func TestDecodePodMatchesRoundTrip(t *testing.T) {
	for _, tt := range roundTripCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			if msg := checkDecodePod(tt.in); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestDecodePodFallsBack lists inputs the generated converter must leave
// to the round trip, as the reflection converter does.
func TestDecodePodFallsBack(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{"case-insensitive key", map[string]any{"Spec": map[string]any{}}},
		{"case-insensitive nested key", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"Name": "c"}}}}},
		{"non-ASCII key", map[string]any{"metadata": map[string]any{"ñame": "p"}}},
		{"fraction into int64", map[string]any{"spec": map[string]any{"activeDeadlineSeconds": 0.5}}},
		{"int64 beyond int32", map[string]any{"spec": map[string]any{"priority": int64(1) << 31}}},
		{"port beyond int32", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"ports": []any{map[string]any{"containerPort": 1e10}}}}}}},
		{"bool into string", map[string]any{"kind": true}},
		{"bad quantity", map[string]any{"spec": map[string]any{"overhead": map[string]any{"cpu": "lots"}}}},
		{"bad time", map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}}},
		{"object into intOrString", map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"livenessProbe": map[string]any{"httpGet": map[string]any{"port": map[string]any{}}}}}}}},
		{"string into list", map[string]any{"spec": map[string]any{"volumes": "v"}}},
		{"top-level list", []any{}},
	}
	for _, tt := range tests {
		var pod corev1.Pod
		if err := storeCorev1Pod(tt.give, &pod); err != errFallback {
			t.Errorf("storeCorev1Pod(%s: %v) = %v, want errFallback", tt.name, tt.give, err)
		}
	}
}

// checkDecodePod compares DecodePod(v) with the round trip (value, error
// text), and the generated converter's fallback decision and value with
// the reflection converter's; it returns what differs.
func checkDecodePod(v any) string {
	want, wantErr := roundTrip[corev1.Pod](v)
	got, err := DecodePod(v)
	if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
		return "DecodePod(" + show(v) + ") error = " + errString(err) + ", want " + errString(wantErr)
	}
	if err == nil && !reflect.DeepEqual(want, got) {
		return "DecodePod(" + show(v) + ") differs from the JSON round trip (-want +got):\n" + cmp.Diff(want, got)
	}
	var slow, fast corev1.Pod
	slowErr := Into(v, &slow)
	fastErr := storeCorev1Pod(v, &fast)
	if (slowErr != nil) != (fastErr != nil) {
		return "storeCorev1Pod(" + show(v) + ") = " + errString(fastErr) + ", Into = " + errString(slowErr)
	}
	if slowErr == nil && !reflect.DeepEqual(&slow, &fast) {
		return "storeCorev1Pod(" + show(v) + ") differs from Into (-Into +storeCorev1Pod):\n" + cmp.Diff(&slow, &fast)
	}
	return ""
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// generic decodes JSON into the generic form; with ints, integral numbers
// that fit become int64 (as a decoder of the form may hold them), the
// others float64.
func generic(data []byte, ints bool) (any, error) {
	if !ints {
		var v any
		err := json.Unmarshal(data, &v)
		return v, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, strconv.ErrSyntax
	}
	return numbers(v)
}

func numbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseFloat(string(x), 64)
	case map[string]any:
		for k, e := range x {
			n, err := numbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := numbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// podSeeds returns, as JSON, the Pods of the engine's test data and of the
// kyverno/policies corpus (when it is next to the repository): every
// object with kind Pod in their YAML files.
func podSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	dirs := []string{"../../testdata"}
	if dir, ok := testcorpus.Corpus(""); ok {
		dirs = append(dirs, dir)
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, doc := range strings.Split(string(data), "\n---") {
				var v any
				if yaml.Unmarshal([]byte(doc), &v) != nil {
					continue
				}
				for _, pod := range pods(v, nil) {
					b, err := json.Marshal(pod)
					if err == nil && !seen[string(b)] {
						seen[string(b)] = true
						out = append(out, b)
					}
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// pods appends the objects with kind Pod found in v.
func pods(v any, out []any) []any {
	switch x := v.(type) {
	case map[string]any:
		if x["kind"] == "Pod" {
			out = append(out, x)
		}
		for _, e := range x {
			out = pods(e, out)
		}
	case []any:
		for _, e := range x {
			out = pods(e, out)
		}
	}
	return out
}

// TestDecodePodSeeds runs the Pods of the test data and of the corpus
// through DecodePod, numbers as float64 and as int64.
func TestDecodePodSeeds(t *testing.T) {
	seeds := podSeeds(t)
	if len(seeds) == 0 {
		t.Fatal("podSeeds found no Pod")
	}
	fallbacks := 0
	for _, data := range seeds {
		for _, ints := range []bool{false, true} {
			v, err := generic(data, ints)
			if err != nil {
				t.Fatalf("generic(%s) = %v", data, err)
			}
			if msg := checkDecodePod(v); msg != "" {
				t.Error(msg)
			}
			var pod corev1.Pod
			if storeCorev1Pod(v, &pod) != nil {
				fallbacks++
			}
		}
	}
	t.Logf("%d Pods, %d conversions of 2 each fell back", len(seeds), fallbacks)
}

// FuzzDecodePod checks DecodePod against the round trip, and the
// generated converter against the reflection one, on Pods of the test
// data and the corpus: their JSON mutated as bytes, and their tree
// mutated by ops (see mutate).
func FuzzDecodePod(f *testing.F) {
	f.Add([]byte(typicalPod), false, []byte{})
	f.Add([]byte(typicalPod), true, []byte{3, 1, 40, 7, 90, 12, 11, 0})
	for i, s := range podSeeds(f) {
		f.Add(s, i%2 == 0, []byte{byte(i), byte(i >> 8), byte(i * 7), byte(i * 13)})
	}
	f.Fuzz(func(t *testing.T, data []byte, ints bool, ops []byte) {
		v, err := generic(data, ints)
		if err != nil {
			return
		}
		v = mutate(v, ops)
		if msg := checkDecodePod(v); msg != "" {
			t.Fatal(msg)
		}
	})
}

// replacements are the values mutate puts in place of a node: each JSON
// type, numbers at the edges of the integer types, quantities, times and
// ports valid and not.
var replacements = []any{
	nil, true, false, "", "x", "100m", "1Gi", "lots", "2024-05-01T10:00:00Z", "yesterday", "http", "<&>", "é",
	0.0, 1.0, -1.0, 1.5, 8080.0, 2147483648.0, -2147483649.0, 1e21, 9.3e18, math.Copysign(0, -1),
	int64(0), int64(-1), int64(1) << 31, int64(math.MaxInt64), 1,
	map[string]any{}, []any{}, []any{nil}, map[string]any{"name": "c"}, []any{map[string]any{"name": "c"}},
}

// mutate changes the tree v (decoded from JSON, so it may be changed in
// place) by ops, two bytes an operation: the first picks a node (in the
// order of a walk with sorted keys), the second what to do with it:
// replace it by (a copy of) one of replacements, or for an object
// capitalize a key, add a key json would fold into a field name, or add
// an unknown key.
func mutate(v any, ops []byte) any {
	type node struct {
		v   any
		set func(any)
	}
	for ; len(ops) >= 2; ops = ops[2:] {
		var nodes []node
		var walk func(v any, set func(any))
		walk = func(v any, set func(any)) {
			nodes = append(nodes, node{v, set})
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					walk(x[k], func(n any) { x[k] = n })
				}
			case []any:
				for i := range x {
					walk(x[i], func(n any) { x[i] = n })
				}
			}
		}
		walk(v, func(n any) { v = n })
		target := nodes[int(ops[0])%len(nodes)]
		op := int(ops[1])
		repl := deepCopy(replacements[op/4%len(replacements)])
		if m, ok := target.v.(map[string]any); ok && op%4 != 0 && len(m) > 0 {
			keys := slices.Sorted(maps.Keys(m))
			k := keys[op/4%len(keys)]
			switch op % 4 {
			case 1:
				x := m[k]
				delete(m, k)
				n := min(1, len(k))
				m[strings.ToUpper(k[:n])+k[n:]] = x
			case 2:
				m[strings.ToUpper(k)] = repl
			case 3:
				m["unknown"+k] = repl
			}
			continue
		}
		target.set(repl)
	}
	return v
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
