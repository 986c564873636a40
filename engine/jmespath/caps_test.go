package jmespath

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/engine"
)

// capsDoc holds strings and lists just at and just beyond the limits of
// function results, named by what the expressions below make of them.
func capsDoc() map[string]any {
	half := strings.Repeat("a", MaxStringBytes/2)
	nils := func(n int) []any { return make([]any, n) }
	return map[string]any{
		"half":          half,
		"halfPlus":      half + "a",
		"split":         strings.Repeat("a", MaxListLength),
		"splitPlus":     strings.Repeat("a", MaxListLength+1),
		"commas":        strings.Repeat(",", MaxListLength-1),
		"commasPlus":    strings.Repeat(",", MaxListLength),
		"b64":           strings.Repeat("a", MaxStringBytes/4*3),
		"b64Plus":       strings.Repeat("a", MaxStringBytes/4*3+1),
		"items":         nils(MaxListLength),
		"itemsPlus":     nils(MaxListLength + 1),
		"joinParts":     []any{half, half},
		"joinPartsPlus": []any{half, half + "a"},
		"json":          []any{strings.Repeat("a", MaxStringBytes-4)},
		"jsonPlus":      []any{strings.Repeat("a", MaxStringBytes-3)},
		"invalid":       strings.Repeat("\xff", MaxStringBytes/3),
		"invalidPlus":   strings.Repeat("\xff", MaxStringBytes/3+1),
	}
}

// TestFunctionResultLimits runs every function that can grow its result
// beyond its arguments at its limit, which works, and one step beyond,
// which fails with a *LimitError naming the function and the limit.
func TestFunctionResultLimits(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := capsDoc()
	digits := strings.Repeat("9", MaxQuantityDigits)
	tests := []struct {
		name         string
		giveAt       string // at the limit: no error
		giveOver     string // one step beyond
		wantLimit    string
		wantFunction string
	}{
		{name: "replace_all", giveAt: "replace_all(half, 'a', 'aa')", giveOver: "replace_all(halfPlus, 'a', 'aa')", wantLimit: "MaxStringBytes", wantFunction: "replace_all"},
		{name: "replace", giveAt: "replace(half, 'a', 'aa', `-1`)", giveOver: "replace(halfPlus, 'a', 'aa', `-1`)", wantLimit: "MaxStringBytes", wantFunction: "replace"},
		{name: "replace of the empty string", giveAt: "replace(half, '', 'a', `4194304`)", giveOver: "replace(half, '', 'a', `4194305`)", wantLimit: "MaxStringBytes", wantFunction: "replace"},
		{name: "regex_replace_all", giveAt: "regex_replace_all('^', half, half)", giveOver: "regex_replace_all('^', half, halfPlus)", wantLimit: "MaxStringBytes", wantFunction: "regex_replace_all"},
		{name: "regex_replace_all_literal", giveAt: "regex_replace_all_literal('^', half, half)", giveOver: "regex_replace_all_literal('^', halfPlus, half)", wantLimit: "MaxStringBytes", wantFunction: "regex_replace_all_literal"},
		{name: "regex_replace_all template", giveAt: "regex_replace_all('(?s).*', half, '$0${0}')", giveOver: "regex_replace_all('(?s).*', halfPlus, '$0${0}')", wantLimit: "MaxStringBytes", wantFunction: "regex_replace_all"},
		{name: "split into characters", giveAt: "split(split, '')", giveOver: "split(splitPlus, '')", wantLimit: "MaxListLength", wantFunction: "split"},
		{name: "split", giveAt: "split(commas, ',')", giveOver: "split(commasPlus, ',')", wantLimit: "MaxListLength", wantFunction: "split"},
		{name: "base64_encode", giveAt: "base64_encode(b64)", giveOver: "base64_encode(b64Plus)", wantLimit: "MaxStringBytes", wantFunction: "base64_encode"},
		{name: "items", giveAt: "items(items, 'k', 'v')", giveOver: "items(itemsPlus, 'k', 'v')", wantLimit: "MaxListLength", wantFunction: "items"},
		{name: "join", giveAt: "join('', joinParts)", giveOver: "join('', joinPartsPlus)", wantLimit: "MaxStringBytes", wantFunction: "join"},
		{name: "join separators", giveAt: "join(half, ['', '', ''])", giveOver: "join(halfPlus, ['', '', ''])", wantLimit: "MaxStringBytes", wantFunction: "join"},
		{name: "to_string", giveAt: "to_string(json)", giveOver: "to_string(jsonPlus)", wantLimit: "MaxStringBytes", wantFunction: "to_string"},
		{name: "to_upper of invalid UTF-8", giveAt: "to_upper(invalid)", giveOver: "to_upper(invalidPlus)", wantLimit: "MaxStringBytes", wantFunction: "to_upper"},
		{name: "quantity exponent", giveAt: "add('1e1000', '1')", giveOver: "add('1e1001', '1')", wantLimit: "MaxQuantityDigits", wantFunction: "add"},
		{name: "negative quantity exponent", giveAt: "subtract('1e-1000', '1')", giveOver: "subtract('1e-1001', '1')", wantLimit: "MaxQuantityDigits", wantFunction: "subtract"},
		{name: "quantity digits", giveAt: "sum(['" + digits + "', '1'])", giveOver: "sum(['" + digits + "9', '1'])", wantLimit: "MaxQuantityDigits", wantFunction: "sum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := search(t, in, tt.giveAt, doc); err != nil {
				t.Errorf("Search(%.60q) at the limit = %v, want no error", tt.giveAt, err)
			}
			_, err := search(t, in, tt.giveOver, doc)
			if code := errorCode(err); code != engine.CodeEvaluation {
				t.Errorf("Search(%.60q) error code = %q (%v), want %q", tt.giveOver, code, err, engine.CodeEvaluation)
			}
			le := limitOf(err)
			if le == nil || le.Limit != tt.wantLimit || le.Function != tt.wantFunction {
				t.Fatalf("Search(%.60q) error = %v, want a *LimitError of %s in %s", tt.giveOver, err, tt.wantLimit, tt.wantFunction)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.wantLimit) || !strings.Contains(msg, tt.wantFunction) {
				t.Errorf("Search(%.60q) error = %q, want the limit and the function named", tt.giveOver, msg)
			}
		})
	}
}

// The shape of issue 17: nine nested replace_all calls in a 688-byte
// policy asked for 10 GB on the first Pod.
func TestNestedReplaceAllIsBounded(t *testing.T) {
	expr := "request.object.metadata.name"
	for range 9 {
		expr = "replace_all(" + expr + ", 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')"
	}
	var pod any
	if err := json.Unmarshal([]byte(`{"request": {"object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}}}`), &pod); err != nil {
		t.Fatal(err)
	}
	q, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q) = %v", expr, err)
	}
	in := newTestInterpreter(Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = in.Search(q, pod)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if le := limitOf(err); le == nil || le.Limit != "MaxStringBytes" || le.Function != "replace_all" {
		t.Fatalf("Search(nine nested replace_all) error = %v, want a *LimitError of MaxStringBytes in replace_all", err)
	}
	const maxAlloc = 64 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("Search(nine nested replace_all) allocated %d MiB, want at most %d MiB", got>>20, maxAlloc>>20)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Search(nine nested replace_all) took %v, want at most 2s", elapsed)
	}
}

func TestJSONSize(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{name: "null", give: nil},
		{name: "booleans", give: []any{true, false}},
		{name: "numbers", give: []any{0.0, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.123, -1.7976931348623157e308}},
		{name: "escapes", give: "a\"b\\c\nd\re\tf\x01g<h>i&j\u2028k\u2029l\xffm€"},
		{name: "object", give: map[string]any{"a<": []any{"x", nil, map[string]any{}}, "": 1.0}},
		{name: "other numbers", give: []any{int64(-12), json.Number("3.25")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := jsonSize(tt.give, 1<<20)
			if !ok || got < len(want) || got > len(want)+24 {
				t.Errorf("jsonSize(%v) = %d, %v, want %d (json.Marshal's length) or a little more, true", tt.give, got, ok, len(want))
			}
		})
	}
}

// Values that share their parts (a list holding another twice, again and
// again) are small in memory and huge in JSON: jsonSize stops at the
// limit.
func TestToStringOfSharedValues(t *testing.T) {
	var shared any = "x"
	for range 60 {
		shared = []any{shared, shared}
	}
	in := newTestInterpreter(Options{})
	start := time.Now()
	_, err := search(t, in, "to_string(shared)", map[string]any{"shared": shared})
	if le := limitOf(err); le == nil || le.Limit != "MaxStringBytes" || le.Function != "to_string" {
		t.Errorf("Search(to_string of 2^60 copies) error = %v, want a *LimitError of MaxStringBytes in to_string", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Search(to_string of 2^60 copies) took %v", d)
	}
}
