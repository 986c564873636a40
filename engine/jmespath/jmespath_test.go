package jmespath

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		giveExpr string
	}{
		{name: "path", giveExpr: "request.object.metadata.name"},
		{name: "builtin", giveExpr: "length(spec.containers)"},
		{name: "kyverno function", giveExpr: "to_upper(name)"},
		{name: "nested calls", giveExpr: "truncate(to_lower(trim(name, ' ')), `9`)"},
		{name: "zero arguments", giveExpr: "time_now_utc()"},
		{name: "variadic builtin", giveExpr: "merge(a, b, `{}`)"},
		{name: "variadic builtin one argument", giveExpr: "not_null(a)"},
		{name: "expref argument", giveExpr: "sort_by(items, &name)"},
		{name: "call in filter", giveExpr: "spec.containers[?starts_with(image, 'ghcr.io/')].name"},
		{name: "call in multiselect", giveExpr: "{u: to_upper(a), n: length(b)}"},
		{name: "call after pipe", giveExpr: "items | length(@)"},
		{name: "function-like text in raw string", giveExpr: "'nosuch(a, b)'"},
		{name: "function-like text in literal", giveExpr: "`\"nosuch(a)\"`"},
		{name: "function-like text in quoted field", giveExpr: "\"nosuch(\".a"},
		{name: "literal of an accepted union type", giveExpr: "regex_match('^1', `12`)"},
		{name: "any accepts literal", giveExpr: "add(`1`, '1Ki')"},
		{name: "array number literal", giveExpr: "avg(`[1, 2]`)"},
		{name: "array string literal", giveExpr: "join(',', `[\"a\"]`)"},
		{name: "empty array literal", giveExpr: "sort(`[]`)"},
		{name: "string literal for string", giveExpr: "split('a,b', ',')"},
		{name: "overridden builtin sum takes quantities", giveExpr: "sum(['1Ki', '2Ki'])"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.giveExpr)
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.giveExpr, err)
			}
			if got := q.String(); got != tt.giveExpr {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.giveExpr, got, tt.giveExpr)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		giveExpr string
	}{
		{name: "syntax error", giveExpr: "a.["},
		{name: "unclosed raw string", giveExpr: "to_upper('a)"},
		{name: "unclosed call", giveExpr: "to_upper(a"},
		{name: "empty", giveExpr: ""},
		{name: "unknown function", giveExpr: "nosuch(a)"},
		{name: "unknown function nested", giveExpr: "to_upper(nosuch(a))"},
		{name: "unknown function in filter", giveExpr: "a[?nosuch(@)]"},
		{name: "unknown function in multiselect", giveExpr: "{x: nosuch(a)}"},
		{name: "unknown function after pipe", giveExpr: "a | nosuch(@)"},
		{name: "case matters", giveExpr: "To_Upper(a)"},
		{name: "builtin too few", giveExpr: "length()"},
		{name: "builtin too many", giveExpr: "starts_with(a, b, c)"},
		{name: "kyverno too few", giveExpr: "regex_match('a')"},
		{name: "kyverno too many", giveExpr: "to_upper(a, b)"},
		{name: "zero-argument function with argument", giveExpr: "time_now(a)"},
		{name: "variadic builtin without arguments", giveExpr: "merge()"},
		{name: "number literal for string", giveExpr: "to_upper(`1`)"},
		{name: "string literal for number", giveExpr: "truncate(a, '9')"},
		{name: "null literal for string", giveExpr: "to_lower(`null`)"},
		{name: "object literal for array", giveExpr: "sum(`{}`)"},
		{name: "mixed array for array of numbers", giveExpr: "avg(`[1, \"a\"]`)"},
		{name: "number literal for object in variadic tail", giveExpr: "merge(a, `1`)"},
		{name: "expref for string", giveExpr: "to_upper(&a)"},
		{name: "literal for expref", giveExpr: "sort_by(a, 'name')"},
		{name: "several problems", giveExpr: "nosuch(a) || to_upper(a, b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.giveExpr)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tt.giveExpr, q)
			}
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error = %T (%v), want *engine.Error", tt.giveExpr, err, err)
			}
			if e.Code != engine.CodeInvalidVariable || e.Path != "" {
				t.Errorf("Parse(%q) error = {Code: %q, Path: %q}, want {Code: %q, Path: \"\"}", tt.giveExpr, e.Code, e.Path, engine.CodeInvalidVariable)
			}
		})
	}
}

func TestSearchCore(t *testing.T) {
	runSearchTests(t, newTestInterpreter(Options{}), []searchTest{
		{name: "nested path", giveExpr: "nested.a.b[2].c", want: "d"},
		{name: "filter", giveExpr: "list[?@ == 'a']", want: []any{"a"}},
		{name: "missing key inside projection is skipped", giveExpr: "nested.a.b[*].c", want: []any{"d"}},
		{name: "or falls back on missing key", giveExpr: "nope || 'default'", want: "default"},
		{name: "builtin length", giveExpr: "length(list)", want: 3.0},
		{name: "builtin sort", giveExpr: "sort(nums)", want: []any{1.0, 2.0, 3.0}},
		{name: "builtin merge", giveExpr: "merge(sel, `{\"b\": 1}`)", want: map[string]any{"app": "x", "b": 1.0}},
		{name: "builtin not_null skips missing", giveExpr: "not_null(nope, s)", want: "Hello World"},
		{name: "missing argument is null", giveExpr: "type(nope)", want: "null"},
	})
}

func TestSearchErrors(t *testing.T) {
	runSearchErrorTests(t, newTestInterpreter(Options{}), []searchErrorTest{
		{name: "missing top-level key", giveExpr: "nope", wantCode: engine.CodeVariableNotResolved},
		{name: "missing nested key", giveExpr: "nested.a.x", wantCode: engine.CodeVariableNotResolved},
		{name: "function error", giveExpr: "to_boolean('yes')", wantCode: engine.CodeEvaluation},
		{name: "argument type from data", giveExpr: "to_upper(n)", wantCode: engine.CodeEvaluation},
		{name: "missing argument for string", giveExpr: "to_upper(nope)", wantCode: engine.CodeEvaluation},
		{name: "builtin argument type", giveExpr: "abs(s)", wantCode: engine.CodeEvaluation},
		// go-jmespath's merge() panics on a non-object; Kyverno crashes.
		{name: "panic in go-jmespath is recovered", giveExpr: "merge(obj, s)", wantCode: engine.CodeEvaluation},
	})
}

func TestIsNotFound(t *testing.T) {
	in := newTestInterpreter(Options{})
	tests := []struct {
		name     string
		giveExpr string
		want     bool
	}{
		{name: "missing key", giveExpr: "nested.nope", want: true},
		{name: "function error", giveExpr: "to_boolean('yes')", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := search(t, in, tt.giveExpr, testDoc(t))
			if got := IsNotFound(err); got != tt.want {
				t.Errorf("IsNotFound(Search(%q)) = %v (%v), want %v", tt.giveExpr, got, err, tt.want)
			}
		})
	}
}

// TestKyvernoErrorMessages pins the messages that Kyverno users see in
// policy reports. These texts are part of the compatibility contract, so
// this one test compares messages (checked against kyverno jp query v1.19.0).
func TestKyvernoErrorMessages(t *testing.T) {
	in := newTestInterpreter(Options{})
	tests := []struct {
		name     string
		giveExpr string
		want     string
	}{
		{name: "missing key", giveExpr: "nested.a.x", want: `Unknown key "x" in path`},
		{name: "argument type", giveExpr: "to_upper(n)", want: `Invalid type for: 3, expected: []jmespath.JpType{"string"}`},
		{name: "union argument type", giveExpr: "lookup(n, 'a')", want: `Invalid type for: 3, expected: []jmespath.JpType{"object", "array"}`},
		{name: "null argument", giveExpr: "to_upper(nope)", want: `Invalid type for: <nil>, expected: []jmespath.JpType{"string"}`},
		{name: "arithmetic mismatch", giveExpr: "add(`1`, '1s')", want: "JMESPath function 'add': Types mismatch"},
		{name: "arithmetic operand", giveExpr: "add('x', `1`)", want: "JMESPath function 'add': invalid operand"},
		{name: "sum names itself", giveExpr: "sum(mixed)", want: "JMESPath function 'sum': invalid operand"},
		{name: "sum of nothing", giveExpr: "sum(empty)", want: "JMESPath function 'sum': at least one element in the array is required"},
		{name: "zero divisor", giveExpr: "divide(`1`, `0`)", want: "JMESPath function 'divide': Zero divisor passed"},
		{name: "modulo of fraction", giveExpr: "modulo(`7.5`, `3`)", want: "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"},
		{name: "round to fraction", giveExpr: "round(`1.5`, `1.5`)", want: "JMESPath function 'round': Non-integer argument(s) passed for round off"},
		{name: "to_boolean", giveExpr: "to_boolean('yes')", want: "JMESPath function 'to_boolean': lowercase argument must be 'true' or 'false' (provided: 'yes')"},
		{name: "bad regex", giveExpr: "regex_replace_all('(', 'a', 'b')", want: "JMESPath function 'regex_replace_all': error parsing regexp: missing closing ): `(`"},
		{name: "bad regex in regex_match", giveExpr: "regex_match('(', 'a')", want: "error parsing regexp: missing closing ): `(`"},
		{name: "lookup index", giveExpr: "lookup(list, `1.5`)", want: "JMESPath function 'lookup': argument #2: expected an integer number but got: 1.5"},
		{name: "lookup key type", giveExpr: "lookup(obj, `1`)", want: "JMESPath function 'lookup': argument #2 is not of type String"},
		{name: "object_from_lists key", giveExpr: "object_from_lists(`[null]`, `[\"a\"]`)", want: "JMESPath function 'object_from_lists': argument #1 is not of type StringArray"},
		{name: "time parse", giveExpr: "time_add('bad', '1h')", want: `parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"`},
		{name: "duration parse", giveExpr: "time_add(t1, 'x')", want: `time: invalid duration "x"`},
		{name: "epoch parse", giveExpr: "time_parse('1136239445', 'x')", want: `strconv.ParseInt: parsing "x": invalid syntax`},
		{name: "random without pattern", giveExpr: "random('')", want: "no pattern provided"},
		{name: "pem", giveExpr: "x509_decode('junk')", want: "failed to decode PEM block"},
		{name: "image", giveExpr: "image_normalize('NGINX')", want: "JMESPath function 'image_normalize': bad image: docker.io/NGINX, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: repository name must be lowercase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := search(t, in, tt.giveExpr, testDoc(t))
			if err == nil {
				t.Fatalf("Search(%q) error = nil, want %q", tt.giveExpr, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Search(%q) error = %q, want %q", tt.giveExpr, got, tt.want)
			}
		})
	}
}

// Data from other decoders may hold int, int64 or json.Number where JSON
// decoding gives float64; functions taking numbers accept them all.
func TestSearchNonFloatNumbers(t *testing.T) {
	in := newTestInterpreter(Options{})
	data := map[string]any{
		"i":    int(2),
		"i64":  int64(3),
		"u8":   uint8(4),
		"jn":   json.Number("5"),
		"s":    "abcdef",
		"list": []any{"a", "b", "c", "d"},
		"strs": []string{"x", "y"},
	}
	tests := []struct {
		name     string
		giveExpr string
		want     any
	}{
		{name: "truncate int", giveExpr: "truncate(s, i)", want: "ab"},
		{name: "truncate int64", giveExpr: "truncate(s, i64)", want: "abc"},
		{name: "truncate json.Number", giveExpr: "truncate(s, jn)", want: "abcde"},
		{name: "add int and int64", giveExpr: "add(i, i64)", want: 5.0},
		{name: "multiply quantity by uint8", giveExpr: "multiply('1Ki', u8)", want: "4Ki"},
		{name: "lookup index int", giveExpr: "lookup(list, i)", want: "c"},
		{name: "round json.Number", giveExpr: "round(jn, i)", want: 5.0},
		{name: "items of a []string", giveExpr: "items(strs, 'k', 'v')", want: []any{
			map[string]any{"k": 0.0, "v": "x"},
			map[string]any{"k": 1.0, "v": "y"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := search(t, in, tt.giveExpr, data)
			if err != nil {
				t.Fatalf("Search(%q) error = %v, want none", tt.giveExpr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) mismatch (-want +got):\n%s", tt.giveExpr, diff)
			}
		})
	}
}

// kyvernoFunctions are the custom functions documented in
// kyverno-docs/policy-types/cluster-policy/jmespath.md ("Custom Filters").
var kyvernoFunctions = []string{
	"add", "base64_decode", "base64_encode", "compare", "divide", "equal_fold",
	"image_normalize", "is_external_url", "items", "label_match", "lookup", "md5",
	"modulo", "multiply", "object_from_lists", "parse_json", "parse_yaml",
	"path_canonicalize", "pattern_match", "random", "regex_match",
	"regex_replace_all", "regex_replace_all_literal", "replace", "replace_all",
	"round", "semver_compare", "sha1", "sha256", "split", "subtract", "sum",
	"time_add", "time_after", "time_before", "time_between", "time_diff",
	"time_now", "time_now_utc", "time_parse", "time_since", "time_to_cron",
	"time_truncate", "time_utc", "to_boolean", "to_lower", "to_upper", "trim",
	"trim_prefix", "truncate", "x509_decode",
}

var builtinFunctions = []string{
	"abs", "avg", "ceil", "contains", "ends_with", "floor", "join", "keys",
	"length", "map", "max", "max_by", "merge", "min", "min_by", "not_null",
	"reverse", "sort", "sort_by", "starts_with", "to_array", "to_number",
	"to_string", "type", "values",
}

func TestFunctionsListsEveryFunctionOnce(t *testing.T) {
	var gotKyverno, gotBuiltin []string
	for _, f := range Functions() {
		if f.Builtin {
			gotBuiltin = append(gotBuiltin, f.Name)
		} else {
			gotKyverno = append(gotKyverno, f.Name)
		}
	}
	slices.Sort(gotKyverno)
	slices.Sort(gotBuiltin)
	if diff := cmp.Diff(kyvernoFunctions, gotKyverno); diff != "" {
		t.Errorf("Functions() Kyverno names mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(builtinFunctions, gotBuiltin); diff != "" {
		t.Errorf("Functions() built-in names mismatch (-want +got):\n%s", diff)
	}
}

func TestFunctionsSignature(t *testing.T) {
	tests := []struct {
		name string
		want FunctionInfo
	}{
		{name: "regex_match", want: FunctionInfo{
			Name: "regex_match", Signature: "regex_match(string, string|number) bool",
			Note: "first string is the regular exression which is compared with second input which can be a number or string",
		}},
		{name: "time_now", want: FunctionInfo{
			Name: "time_now", Signature: "time_now() string", Note: "returns current time in RFC 3339 format",
		}},
		{name: "lookup", want: FunctionInfo{
			Name: "lookup", Signature: "lookup(object|array, string|number) any",
			Note: "returns the value corresponding to the given key/index in the given object/array",
		}},
		{name: "merge", want: FunctionInfo{
			Name: "merge", Signature: "merge(object, ...) object", Note: "merges objects; later keys win", Builtin: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(Functions(), func(f FunctionInfo) bool { return f.Name == tt.name })
			if i < 0 {
				t.Fatalf("Functions() has no %q", tt.name)
			}
			if diff := cmp.Diff(tt.want, Functions()[i]); diff != "" {
				t.Errorf("Functions()[%q] mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// Every Kyverno function of the table is registered: calling it with the
// right number of null arguments reaches its type check (or its body), never
// go-jmespath's "unknown function".
func TestNewRegistersEveryKyvernoFunction(t *testing.T) {
	in := newTestInterpreter(Options{})
	for _, f := range functions {
		if f.builtin() {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			args := make([]any, len(f.Args))
			_, err := in.caller.CallFunction(f.Name, args, nil)
			if err != nil && err.Error() == "unknown function: "+f.Name {
				t.Errorf("CallFunction(%q) = %v, want the function registered", f.Name, err)
			}
		})
	}
}

// One Interpreter serves concurrent searches (run with -race).
func TestSearchConcurrent(t *testing.T) {
	in := newTestInterpreter(Options{})
	q, err := Parse("[regex_match('^H', s), random('[a-z]{4}'), time_now(), to_upper(s)]")
	if err != nil {
		t.Fatal(err)
	}
	doc := testDoc(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if _, err = in.Search(q, doc); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Search = %v, want no error", err)
		}
	}
}

// go-jmespath's sort_by sorts its argument in place (in Kyverno this
// reorders the context data); Search leaves the data alone.
func TestSortByDoesNotMutateData(t *testing.T) {
	in := newTestInterpreter(Options{})
	tests := []struct {
		name     string
		giveExpr string
		want     any
	}{
		{name: "sorted copy", giveExpr: "sort_by(people, &age)[*].name", want: []any{"b", "c", "a"}},
		{name: "failed sort (null element)", giveExpr: "sort_by(withNull, &@)", want: nil},
		{name: "missing list is an error", giveExpr: "sort_by(nope, &age)", want: nil},
		{name: "[]string data", giveExpr: "sort_by(strs, &@)", want: []any{"x", "y", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const original = `{"people": [{"name": "a", "age": 3}, {"name": "b", "age": 1}, {"name": "c", "age": 2}], "withNull": ["b", null, "a"]}`
			data := decodeJSON(t, original).(map[string]any)
			data["strs"] = []string{"z", "x", "y"}
			got, _ := search(t, in, tt.giveExpr, data)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) mismatch (-want +got):\n%s", tt.giveExpr, diff)
			}
			want := decodeJSON(t, original).(map[string]any)
			want["strs"] = []string{"z", "x", "y"}
			if diff := cmp.Diff(want, data); diff != "" {
				t.Errorf("Search(%q) changed its data (-want +got):\n%s", tt.giveExpr, diff)
			}
		})
	}
}

func TestPure(t *testing.T) {
	tests := []struct {
		giveExpr string
		want     bool
	}{
		{"a.b", true},
		{"element.keys(@)[]", true},
		{"a[].to_upper(@) || `[]`", true},
		{"sort_by(a, &b)", true},
		{"random('[a-z]{4}')", false},
		{"time_now()", false},
		{"time_now_utc()", false},
		{"time_since('', a, '')", false},
		{"is_external_url(a)", false},
		{"[a, length(time_now())]", false},
		{"map(&time_now_utc(), a)", false},
		{"time_add(a, '1h')", true},
	}
	for _, tt := range tests {
		q, err := Parse(tt.giveExpr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.giveExpr, err)
		}
		if got := q.Pure(); got != tt.want {
			t.Errorf("Parse(%q).Pure() = %v, want %v", tt.giveExpr, got, tt.want)
		}
	}
}

// TestImpureFunctionsExist keeps impureFunctions in step with the table.
func TestImpureFunctionsExist(t *testing.T) {
	for name := range impureFunctions {
		if _, ok := lookupFunction(name); !ok {
			t.Errorf("lookupFunction(%q) = false, want an impure function of the table", name)
		}
	}
}
