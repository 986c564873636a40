package yamlenc

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// texts are strings whose YAML style is subtle.
var texts = []string{
	"validation error: Privileged mode is disallowed. The fields spec.containers[*].securityContext.privileged must be unset or set to `false`. rule privileged-containers failed at path /spec/containers/0/securityContext/privileged/",
	"nginx:1.25", "ghcr.io/x/y@sha256:abc", "100m", "64Mi", "8080", "0.5", "1e3", "1_000", "0x1F", "0o17", "0b101", "-0b1", "-0o7", "0777", "1:20", "1:20.5", "-1:2:3", "1:60", "190:20:30.15",
	"disallow-capabilities", "rule10", "rule9", "rule09", "a1b", "a10b", "ab",
	"it's", "key: value", "key:value", "a #comment", "a#b", "#x", "-x", "- x", "-", "?x", "? x", "?", ":x", ": x", ":", "x:", "x: ",
	"---x", "...x", "---", "x---", " leading", "trailing ", " ", "[x]", "{x}", "x, y", "&x", "*x", "!x", "|x", ">x", "'x", "\"x", "%x", "@x", "`x",
	"true", "True", "TRUE", "tRUE", "yes", "no", "on", "off", "y", "n", "Y", "N", "null", "Null", "~", "tru", "nope", "off-by-one", "yesterday",
	"0", "1.5", "-1", "+1", ".5", ".", "..", ".inf", "-.inf", "+.INF", ".nan", ".NaN", ".x", "-", "+", "2024-01-01", "2024-1-1", "2024-01-01T10:00:00Z", "2024-01-01 10:00:00", "2024-13-01", "12:30:45", "<<", "<x", "=", "x=y",
	"", "tab\there", "\ttab", "héllo", "日本語", "\x7f", "\x00", "\x1b", "\u00a0", "\u0085x", "\ufeffbom", "x\ufeff", "\ufffe", "😀", "a\u00a0b", "a  b", "a ' b", "''", "' '", "\\", "a\\b", "\"", "a\"b",
	"9223372036854775807", "9223372036854775808", "18446744073709551616", "1e400", "0x", "_1", "1_", "+_1", "-.5e-3", "5e", "5.e5",
	strings.Repeat("k", 128), strings.Repeat("k", 129),
	"a\nb", "a\nb\n", "a\nb\n\n", "\n", "\n\n", "\na", " a\nb", "a\n\nb", "a \nb", "a\n b", "a\nb ", "a\n\tb", "a\x00\nb", "a\rb\nc", "#x\ny", "- x\n", "a\n  \nb", "héllo\nwörld\n", "😀\n",
}

func yamlV3(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatalf("yaml.Marshal(%#v): %v", v, err)
	}
	return string(b)
}

// shapes puts s in every position of a resource-like value.
func shapes(s string) []map[string]any {
	return []map[string]any{
		{s: s},
		{"a": s, "b": []any{s, map[string]any{s: s, "x": []any{s}}}},
		{"spec": map[string]any{"containers": []any{map[string]any{"name": s, "args": []any{s, s}, "env": []any{map[string]any{"name": "X", "value": s}}}}}},
		{"l": []any{[]any{s, []any{s}}, map[string]any{}, []any{}, nil, map[string]any{"m": map[string]any{s: map[string]any{s: []any{}}}}}},
	}
}

func TestAppendMatchesYAML(t *testing.T) {
	taken := 0
	for _, s := range texts {
		for _, v := range shapes(s) {
			got, ok := Append(nil, v)
			if !ok {
				continue
			}
			taken++
			if want := yamlV3(t, v); string(got) != want {
				t.Errorf("Append(%q) differs from yaml.v3 (-want +got):\n%s", v, cmp.Diff(want, string(got)))
			}
		}
	}
	if taken < len(texts)*3 {
		t.Errorf("Append took %d of %d inputs", taken, len(texts)*4)
	}
}

func TestAppendValues(t *testing.T) {
	tests := []struct {
		name string
		give map[string]any
	}{
		{name: "empty", give: map[string]any{}},
		{name: "numbers", give: map[string]any{"i": int64(-3), "n": 42, "f": 1.5, "big": 1e21, "small": 1e-7, "whole": 2.0, "inf": math.Inf(1), "ninf": math.Inf(-1), "nan": math.NaN(), "neg0": math.Copysign(0, -1)}},
		{name: "bools and null", give: map[string]any{"t": true, "f": false, "n": nil}},
		{name: "nil collections", give: map[string]any{"m": map[string]any(nil), "l": []any(nil)}},
		{name: "deep", give: map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{map[string]any{"d": map[string]any{"e": []any{[]any{map[string]any{"f": 1}}}}}}}}}},
		{name: "key order", give: map[string]any{"rule10": 1, "rule9": 2, "rule09": 3, "a": 4, "B": 5, "_x": 6, "a-b": 7, "ab": 8, "a1": 9, "a01": 10, "a001b": 11, "x10y2": 12, "x10y10": 13}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Append(nil, tt.give)
			if !ok {
				t.Fatalf("Append(%v) fell back to yaml.v3", tt.give)
			}
			if want := yamlV3(t, tt.give); string(got) != want {
				t.Errorf("Append(%v) differs from yaml.v3 (-want +got):\n%s", tt.give, cmp.Diff(want, string(got)))
			}
		})
	}
}

// TestAppendFallback lists what Append leaves to yaml.v3; Marshal must
// still give yaml.v3's output for each.
func TestAppendFallback(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{name: "not a map", give: []any{"x"}},
		{name: "line break in a key", give: map[string]any{"x\ny": "a"}},
		{name: "carriage return", give: map[string]any{"a": "x\ry"}},
		{name: "line separator", give: map[string]any{"a": "x\u2028y"}},
		{name: "invalid UTF-8", give: map[string]any{"a": "\xff"}},
		{name: "byte order mark", give: map[string]any{"a": "\ufeffx"}},
		{name: "long key", give: map[string]any{strings.Repeat("k", MaxSimpleKeyBytes+1): 1}},
		{name: "other type", give: map[string]any{"a": int32(1)}},
		{name: "typed map", give: map[string]any{"a": map[string]string{"b": "c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := Append([]byte("keep"), tt.give); ok || string(got) != "keep" {
				t.Errorf("Append(%v) = %q, %v, want keep, false", tt.give, got, ok)
			}
			got, err := Marshal(tt.give)
			if err != nil {
				t.Fatalf("Marshal(%v): %v", tt.give, err)
			}
			if want := yamlV3(t, tt.give); string(got) != want {
				t.Errorf("Marshal(%v) = %q, want %q", tt.give, got, want)
			}
		})
	}
}

func TestKeyLimits(t *testing.T) {
	at := map[string]any{strings.Repeat("k", MaxSimpleKeyBytes): 1}
	if _, ok := Append(nil, at); !ok {
		t.Errorf("Append(key of %d bytes) fell back", MaxSimpleKeyBytes)
	}
	many := map[string]any{}
	for i := range MaxCheckedKeys {
		many["k"+strings.Repeat("x", i)+"1"] = i
	}
	got, ok := Append(nil, many)
	if !ok {
		t.Fatalf("Append(%d keys with digits) fell back", MaxCheckedKeys)
	}
	if want := yamlV3(t, many); string(got) != want {
		t.Errorf("Append(%d keys) differs from yaml.v3 (-want +got):\n%s", MaxCheckedKeys, cmp.Diff(want, string(got)))
	}
	many["z1"] = 0
	if _, ok := Append(nil, many); ok {
		t.Errorf("Append(%d keys with digits) = ok, want the yaml.v3 fallback", MaxCheckedKeys+1)
	}
}

func TestPlainIsString(t *testing.T) {
	for _, s := range texts {
		var back any
		if err := yaml.Unmarshal([]byte("x: "+s), &back); err != nil {
			continue // not valid plain YAML at all: no claim to check
		}
		_, isString := back.(map[string]any)["x"].(string)
		if s == "" || strings.ContainsAny(s, "\n\r#:'\"[]{}&*!|>%@`,?\t\x00\x1b\x7f") || strings.HasPrefix(s, "-") || strings.HasPrefix(s, " ") {
			continue // indicators: read back differs for other reasons
		}
		if got := plainIsString(s) && !isBase60Float(s); got != isString && !isOldBool(s) {
			t.Errorf("plainIsString(%q) = %v, want %v", s, got, isString)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range texts {
		f.Add(s)
	}
	f.Add(`{"a": [1, 2.5, "x", null, true, {"b": {}}], "c": {"d": [[]]}}`)
	f.Add(`{"metadata": {"labels": {"app": "x"}, "annotations": {"a/b": "1"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		values := shapes(s)
		var decoded map[string]any
		if json.Unmarshal([]byte(s), &decoded) == nil && decoded != nil {
			values = append(values, decoded)
		}
		for _, v := range values {
			got, ok := Append(nil, v)
			if !ok {
				continue
			}
			want, err := yaml.Marshal(v)
			if err != nil {
				t.Fatalf("yaml.Marshal(%q): %v", v, err)
			}
			if string(got) != string(want) {
				t.Fatalf("Append(%q) differs from yaml.v3 (-want +got):\n%s", v, cmp.Diff(string(want), string(got)))
			}
		}
	})
}

func BenchmarkMarshal(b *testing.B) {
	pod := map[string]any{}
	if err := json.Unmarshal([]byte(benchPod), &pod); err != nil {
		b.Fatal(err)
	}
	b.Run("yamlenc", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = Append(buf[:0], pod)
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := yaml.Marshal(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
}

const benchPod = `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-1", "namespace": "ns-1",
 "labels": {"app": "app-1", "team": "t1", "app.kubernetes.io/name": "x"}, "annotations": {"policies.kyverno.io/last-applied-patches": "add-default-resources.x: added /spec/containers/0/resources"}},
 "spec": {"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
  "containers": [{"name": "c0", "image": "ghcr.io/acme/app:1.2.3", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
   "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}, "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}},
   {"name": "c1", "image": "nginx:1.25", "ports": [{"containerPort": 8080, "hostPort": 30001}]}]}}`

func TestCompareKeys(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"rule2", "rule10", -1},
		{"rule10", "rule2", 1},
		{"a", "b", -1},
		{"a", "ab", -1},
		{"a-b", "ab", -1}, // other characters sort before letters
		{"rule09", "rule9", 1},
		{"rule9", "rule9", 0},
	}
	for _, tt := range tests {
		if got := CompareKeys(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareKeys(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
