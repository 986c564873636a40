package pattern

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The error texts are built by concatenation, with the path written once
// into the text. These tests hold them to the fmt formulas they replace.

// oldPathString is the path as fmt and strconv rendered it.
func oldPathString(path []seg) string {
	s := "/"
	for _, p := range path {
		if p.idx >= 0 {
			s += strconv.Itoa(p.idx)
		} else {
			s += p.key
		}
		s += "/"
	}
	return s
}

// oldMessages are the texts of each error built at a path, by the fmt
// formulas: name -> (text, path).
func oldMessages(path []seg, res any, pn *node, key string) map[string][2]string {
	ps := oldPathString(path)
	kps := oldPathString(append(append([]seg(nil), path...), seg{key: key, idx: -1}))
	return map[string][2]string{
		"structure": {fmt.Sprintf("pattern and resource have different structures. Path: %s. Expected map[string]interface {}, found %s", ps, typeName(res)), ps},
		"overlay":   {fmt.Sprintf("validation rule failed at path %s, resource does not satisfy the expected overlay pattern", ps), ps},
		"unknown":   {fmt.Sprintf("failed at '%s', pattern contains unknown type", ps), ps},
		"mismatch":  {fmt.Sprintf("resource value '%s' does not match '%v' at path %s", fmt.Sprint(kyvernoValue(res)), pn.raw, ps), ps},
		"negation":  {negationMsg + ": " + kps + " is not allowed", kps},
		"star":      {fmt.Sprintf("%s/%s not found", ps, key), ps},
		"existence": {fmt.Sprintf("existence anchor validation failed at path %s", ps), ps},
	}
}

func newMessages(st *state, res any, pn *node, key string) map[string][2]string {
	out := map[string][2]string{}
	add := func(name string, path string, err *matchErr) {
		out[name] = [2]string{err.msg, path}
	}
	p, err := st.errAt([]string{"pattern and resource have different structures. Path: "}, ". Expected map[string]interface {}, found ", typeName(res))
	add("structure", p, err)
	p, err = st.errAt([]string{"validation rule failed at path "}, ", resource does not satisfy the expected overlay pattern")
	add("overlay", p, err)
	p, err = st.errAt([]string{"failed at '"}, "', pattern contains unknown type")
	add("unknown", p, err)
	p, err = st.mismatch(res, pn)
	add("mismatch", p, err)
	st.pushKey(key)
	p, err = st.errAt([]string{negationMsg + ": "}, " is not allowed")
	st.pop()
	add("negation", p, err)
	p, err = st.errAt(nil, "/", key, " not found")
	add("star", p, err)
	p, err = st.errAt([]string{"existence anchor validation failed at path "})
	add("existence", p, err)
	return out
}

// decodeAny decodes JSON, keeping numbers as json.Number when asked.
func decodeAny(s string, useNumber bool) (any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

func checkMessages(t *testing.T, path []seg, res any, pat any, key string) {
	t.Helper()
	pn := CompileSubstituted(pat).root
	st := &state{path: append([]seg(nil), path...)}
	want := oldMessages(path, res, pn, key)
	got := newMessages(st, res, pn, key)
	for name, w := range want {
		if g := got[name]; g != w {
			t.Errorf("%s error at %q for (%#v, %#v) = %q, want %q", name, oldPathString(path), res, pat, g, w)
		}
	}
	if got, want := st.pathString(), oldPathString(path); got != want {
		t.Errorf("pathString(%v) = %q, want %q", path, got, want)
	}
}

func TestErrorTexts(t *testing.T) {
	tests := []struct {
		name     string
		givePath []seg
		giveRes  string
		givePat  string
		giveKey  string
	}{
		{name: "root, string", giveRes: `"nginx"`, givePat: `"nginx:*"`, giveKey: "image"},
		{name: "nested, null", givePath: []seg{{key: "spec", idx: -1}, {key: "containers", idx: -1}, {idx: 0}, {key: "securityContext", idx: -1}}, giveRes: `null`, givePat: `{"a": 1}`, giveKey: "x"},
		{name: "big index, int", givePath: []seg{{idx: 1234567}, {idx: 10}, {idx: 9}}, giveRes: `5`, givePat: `5.5`, giveKey: ""},
		{name: "float value", givePath: []seg{{key: "", idx: -1}}, giveRes: `1e21`, givePat: `true`, giveKey: "k/"},
		{name: "bool and list", giveRes: `false`, givePat: `[1, "a"]`, giveKey: "X(y)"},
		{name: "map value", giveRes: `{"a": [1, 2.5, null]}`, givePat: `null`, giveKey: "a"},
		{name: "list value", giveRes: `[1, "x"]`, givePat: `{"b": "c"}`, giveKey: "b"},
		{name: "unicode", givePath: []seg{{key: "ü/é", idx: -1}}, giveRes: `"日本"`, givePat: `"<1Gi | >2"`, giveKey: "名前"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, useNumber := range []bool{false, true} {
				res, ok1 := decodeAny(tt.giveRes, useNumber)
				pat, ok2 := decodeAny(tt.givePat, false)
				if !ok1 || !ok2 {
					t.Fatalf("decode(%s, %s) failed", tt.giveRes, tt.givePat)
				}
				checkMessages(t, tt.givePath, res, pat, tt.giveKey)
			}
		})
	}
}

func TestRenderValueTypes(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{"nil", nil}, {"string", "a b"}, {"bool", true}, {"int", -7}, {"int64", int64(1) << 62},
		{"int32", int32(-3)}, {"uint64", uint64(1) << 63}, {"float", 0.1}, {"float big", 1e21},
		{"float32", float32(2.5)}, {"json int", json.Number("12")}, {"json float", json.Number("1.50")},
		{"json bad", json.Number("x")}, {"map", map[string]any{"a": json.Number("1")}}, {"list", []any{nil, 1.0}},
		{"other", struct{ A int }{1}},
	}
	for _, tt := range tests {
		if got, want := renderValue(tt.give), fmt.Sprint(kyvernoValue(tt.give)); got != want {
			t.Errorf("renderValue(%#v) = %q, want %q", tt.give, got, want)
		}
		if got, want := sprint(tt.give), fmt.Sprint(tt.give); got != want {
			t.Errorf("sprint(%#v) = %q, want %q", tt.give, got, want)
		}
	}
}

// oldRuleMessage is Result.RuleMessage as it was written with +=.
func oldRuleMessage(r Result, rule, message string) string {
	if message != "" && !strings.HasSuffix(message, ".") {
		message += "."
	}
	prefix := "validation error: "
	if message != "" {
		prefix += message + " "
	}
	if r.Status == Fail {
		return prefix + "rule " + rule + " failed at path " + r.Path
	}
	return prefix + "rule " + rule + " execution error: " + r.Message
}

func TestRuleMessageFailError(t *testing.T) {
	for _, st := range []Status{Fail, Error} {
		for _, msg := range []string{"", ".", "x", "x.", "Privileged mode is disallowed. "} {
			r := Result{Status: st, Path: "/spec/containers/0/", Message: "m"}
			if got, want := r.RuleMessage("r", msg), oldRuleMessage(r, "r", msg); got != want {
				t.Errorf("%v.RuleMessage(r, %q) = %q, want %q", st, msg, got, want)
			}
		}
	}
	r := AnyResult{Status: Pass, Index: 12}
	if got, want := r.RuleMessage("r", ""), fmt.Sprintf("validation rule '%s' anyPattern[%d] passed.", "r", 12); got != want {
		t.Errorf("AnyResult.RuleMessage(r) = %q, want %q", got, want)
	}
}

// FuzzErrorTexts holds the error texts built at a path to the fmt formulas.
// The path is the fuzzed string split at '/', numbers as indexes.
func FuzzErrorTexts(f *testing.F) {
	f.Add("spec/containers/0/securityContext", `null`, `{"a":1}`, "x", false)
	f.Add("metadata/labels", `1e+21`, `"?*"`, "app", true)
	f.Add("", `[1,{"a":null}]`, `3`, "", false)
	f.Fuzz(func(t *testing.T, path, res, pat, key string, useNumber bool) {
		r, ok1 := decodeAny(res, useNumber)
		p, ok2 := decodeAny(pat, false)
		if !ok1 || !ok2 {
			return
		}
		var segs []seg
		if path != "" {
			for _, part := range strings.Split(path, "/") {
				if i, err := strconv.Atoi(part); err == nil && i >= 0 {
					segs = append(segs, seg{idx: i})
				} else {
					segs = append(segs, seg{key: part, idx: -1})
				}
			}
		}
		checkMessages(t, segs, r, p, key)
	})
}
