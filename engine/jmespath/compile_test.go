package jmespath

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// compiledSearch evaluates q with its compiled form only; done is false
// where Search hands the query to the interpreter.
func compiledSearch(in *Interpreter, q *Query, data any) (v any, done bool) {
	if q.compiled == nil {
		return nil, false
	}
	return evalCompiled(q.compiled, in.caller, data)
}

// compiledTestDocJSON adds to testDocJSON the shapes the compiled nodes
// branch on: nulls in lists, nested lists, objects in lists, a one-key
// object (value projections are in map order), false-like values.
const compiledTestDocJSON = `{
  "s": "Hello World",
  "n": 3,
  "f": 2.5,
  "t": true,
  "no": false,
  "z": null,
  "list": ["b", "a", "c"],
  "nums": [3, 1, 2, 5, 4],
  "obj": {"team": "apple", "org": "banana"},
  "one": {"only": {"x": 1}},
  "empty": [],
  "emptyObj": {},
  "emptyStr": "",
  "mixed": [1, "a", true, null, [2, [3]], {"x": 4}],
  "nested": [[1, 2], [3, null], 4, null, [], [[5]]],
  "people": [
    {"name": "ann", "age": 30, "tags": ["a", "b"]},
    {"name": "bob", "age": 20},
    {"name": "cy", "age": "old", "tags": []},
    null
  ],
  "element": {
    "name": "nginx",
    "image": "nginx:1.27",
    "securityContext": {"capabilities": {"drop": ["all", "NET_RAW"], "add": ["CHOWN"]}}
  },
  "request": {"object": {"spec": {
    "initContainers": [{"name": "init", "ports": [{"hostPort": 80}, {"containerPort": 1}]}],
    "containers": [
      {"name": "a", "ports": [{"hostPort": 8080}], "securityContext": {"capabilities": {"add": ["NET_ADMIN", "SYS_TIME"]}}},
      {"name": "b"}
    ]
  }}}
}`

// TestCompiled runs queries of every supported node type through the
// compiled form and the interpreter: the compiled form must answer and
// give the interpreter's value.
func TestCompiled(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := decodeJSON(t, compiledTestDocJSON)
	tests := []struct {
		name     string
		giveExpr string
	}{
		{"field of a string is null", "length(s.x || '')"},
		{"field of a list is null", "[list.x]"},
		{"field of a number is null", "[n.x, f[0], t.x]"},
		{"index", "[list[0], list[-1], list[5], list[-9], s[0], obj[0]]"},
		{"index of null is null", "[z[0], z.a]"},
		{"identity", "[@.s, @]|[0]"},
		{"literals", "[`1`, 'a', `{\"a\": [1]}`, `null`, `[]`]"},
		{"missing key in a multiselect list is null", "[s, missing, missing.deeper]"},
		{"missing key in a multiselect hash is null", "{a: s, b: missing}"},
		{"multiselect of null is null", "z.[a, b]"},
		{"multiselect hash of null is null", "z.{a: a}"},
		{"projection drops nulls", "people[*].name"},
		{"projection of missing keys", "people[*].tags"},
		{"projection of a non-list is null", "[s[*].x, obj[*].x, z[*]]"},
		{"projection of a missing key is null", "[missing[*].x]"},
		{"projection right side with functions", "people[*].to_string(age)"},
		{"flatten one level", "nested[]"},
		{"flatten then project", "nested[][0]"},
		{"flatten alone keeps nulls", "[nested[]]"},
		{"flatten of mixed", "mixed[]"},
		{"flatten of a non-list is null", "[s[], obj[], z[]]"},
		{"flatten of a missing key is null", "[missing[]]"},
		{"flatten twice", "nested[][]"},
		{"projection of a projection", "people[*].tags[*]"},
		{"flattened projection", "people[].tags[]"},
		{"filter by comparison", "people[?age > `25`].name"},
		{"filter by string equality", "people[?name == 'bob']"},
		{"filter by truthiness", "people[?tags].name"},
		{"filter on a missing key keeps nothing", "people[?missing].name"},
		{"filter of a non-list is null", "[obj[?a], s[?a]]"},
		{"filter of a missing key is null", "[missing[?a]]"},
		{"filter with not", "people[?!tags].name"},
		{"filter with and/or", "people[?age > `10` && (name == 'ann' || name == 'cy')].name"},
		{"filter of current node", "nums[?@ >= `3`]"},
		{"comparing strings orders nothing", "[s < 'z', s > 'a', s <= s, s >= s]"},
		{"comparing numbers", "[n < f, n > f, n <= `3`, n >= `3.5`, n == `3`, n != `3`]"},
		{"comparing lists and objects", "[list == list, obj == obj, obj != one, empty == `[]`]"},
		{"comparing missing keys", "[missing == z, missing != `null`, missing < `1`]"},
		{"or takes the first true value", "[emptyStr || 'x', empty || 'y', emptyObj || 'z', no || 'w', z || 'v', n || 'u', t || 'u']"},
		{"or of a missing key", "[missing || 'x']"},
		{"or of two missing keys is null", "[missing || missing2]"},
		{"and", "[s && n, empty && n, missing && n, n && missing]"},
		{"not", "[!s, !emptyStr, !missing, !empty, !n, !no]"},
		{"pipe", "people | [0].name"},
		{"pipe over a missing key", "missing | [@]"},
		{"pipe ending in a missing key", "[people | missing]"},
		{"slice", "[nums[1:3], nums[::2], nums[::-1], nums[-2:], nums[:-2], nums[5:1:-2], nums[10:], nums[:-10:-1]]"},
		{"slice of a non-list is null", "[s[1:], obj[:1]]"},
		{"value projection of one key", "one.*.x"},
		{"value projection with a function on the nulls", "one.*.to_string(@)"},
		{"value projection of a non-object is null", "[list.*, s.*, missing.*]"},
		{"value projection of an empty object", "emptyObj.*"},
		{"subexpression into a function", "obj.keys(@) | sort(@)"},
		{"functions of the table", "[length(list), to_upper(s), split(s, ' '), contains(list, 'a'), starts_with(s, 'He')]"},
		{"function of a missing key", "not_null(missing, s)"},
		{"expref functions", "[sort_by(people[0:3], &name)[*].name, max_by(people[0:2], &age).name]"},
		{"sort_by on a copy", "sort_by(people[:3], &name)"},
		{"map", "map(&name, people[0:3])"},
		{"drop to upper", "element.securityContext.capabilities.drop[].to_upper(@) || `[]`"},
		{"drop to upper of a missing list", "element.securityContext.missing[].to_upper(@) || `[]`"},
		{"keys flattened", "element.keys(@)[]"},
		{"keys, values and length evaluated natively", "[length(keys(obj)), sort(values(obj)), length(s), length('h\u00e9llo'), length(nested), length(obj), length(emptyStr), keys(emptyObj), values(one)]"},
		{"length of a filter and of a projection", "[length(people[?age]), length(people[*].name), length(`{}`)]"},
		{"flatten of new lists without lists inside", "[[s, z, n][], [z, z][], people[*].name[], nums[1:3][], keys(one)[], [[s, z][]]]"},
		{"flatten of new lists with lists inside", "[[nested, z, s][], [[z], z][]]"},
		{"all containers", "request.object.spec.[ephemeralContainers, initContainers, containers][]"},
		{"containers", "request.object.spec.containers[]"},
		{"added capabilities", "request.object.spec.[ephemeralContainers, initContainers, containers][].securityContext.capabilities.add[]"},
		{"host ports", "request.object.spec.[ephemeralContainers, initContainers, containers][].ports[].hostPort"},
		{"length of a filter", "length(request.object.spec.containers[?name == 'a']) > `0`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.giveExpr)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tt.giveExpr, err)
			}
			if q.compiled == nil {
				t.Fatalf("Parse(%q) did not compile", tt.giveExpr)
			}
			got, done := compiledSearch(in, q, doc)
			if !done {
				t.Fatalf("compiled %q gave up, want a value", tt.giveExpr)
			}
			diff, err := diffInterpreter(in, q, doc, got)
			if err != nil {
				t.Fatalf("interpreter search(%q) = %v, want no error", tt.giveExpr, err)
			}
			if diff != "" {
				t.Errorf("compiled %q mismatch (-interpreter +compiled):\n%s", tt.giveExpr, diff)
			}
		})
	}
}

// TestCompiledFallback pins the queries the compiled form hands to the
// interpreter (errors, missing keys at the top, typed values), and that
// Search then gives the interpreter's error or value.
func TestCompiledFallback(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := decodeJSON(t, compiledTestDocJSON)
	typed := map[string]any{
		"strs":  []string{"a", "b"},
		"m":     map[string]string{"a": "b"},
		"i":     int64(3),
		"list":  []any{[]string{"x"}, "y"},
		"inner": []any{map[string]string{"a": "b"}},
	}
	tests := []struct {
		name     string
		giveExpr string
		giveData any
		wantErr  bool
	}{
		{"missing key at the top", "missing.a[0].to_string(@)", doc, true},
		{"missing key at the end of an and", "n && missing", doc, true},
		{"function type error", "to_upper(n)", doc, true},
		{"unknown type inside a function error", "[to_upper(n)]", doc, true},
		{"function argument type at run time", "sort(s)", doc, true},
		{"built-in panic", "merge(s)", doc, true},
		{"slice step zero", "nums[::0]", doc, true},
		{"keys of a string", "keys(s)", doc, true},
		{"values of a list", "values(list)", doc, true},
		{"keys of a missing key", "[keys(missing)]", doc, true},
		{"length of a number", "length(n)", doc, true},
		{"length of null", "[length(z)]", doc, true},
		{"length of a typed list", "length(strs)", typed, false},
		{"length of a typed map", "length(m)", typed, true},
		{"keys of a typed map", "keys(m)", typed, true},
		{"typed list projection", "strs[*]", typed, false},
		{"typed list flatten", "list[]", typed, false},
		{"typed map field", "[m.a]", typed, false},
		{"typed filter condition", "inner[?@].x", typed, false},
		{"typed or", "[m || 'x']", typed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.giveExpr)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tt.giveExpr, err)
			}
			if q.compiled == nil {
				t.Fatalf("Parse(%q) did not compile", tt.giveExpr)
			}
			if got, done := compiledSearch(in, q, tt.giveData); done {
				t.Fatalf("compiled %q = %v, want the interpreter to decide", tt.giveExpr, got)
			}
			want, wantErr := in.search(q, tt.giveData)
			if (wantErr != nil) != tt.wantErr {
				t.Fatalf("interpreter search(%q) error = %v, want error %v", tt.giveExpr, wantErr, tt.wantErr)
			}
			got, gotErr := in.Search(q, tt.giveData)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Search(%q) mismatch (-interpreter +Search):\n%s", tt.giveExpr, diff)
			}
			if errString(gotErr) != errString(wantErr) {
				t.Errorf("Search(%q) error = %v, want %v", tt.giveExpr, gotErr, wantErr)
			}
		})
	}
}

// TestCompiledInt64 checks numbers that are not float64 in the data (the
// engine's resources can hold int64): equal to nothing of another type,
// never ordered, true in || and filters.
func TestCompiledInt64(t *testing.T) {
	in := newTestInterpreter(Options{})
	data := map[string]any{"i": int64(3), "is": []any{int64(1), float64(2), int64(3)}}
	for _, expr := range []string{
		"[i == `3`, i != `3`, i > `1`, i < `5`, i || 'x', !i, i.a, i[0]]",
		"is[?@ > `1`]",
		"is[?@ == `2`]",
		"is[?@]",
		"[is == is]",
	} {
		q, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", expr, err)
		}
		got, done := compiledSearch(in, q, data)
		if !done {
			t.Fatalf("compiled %q gave up, want a value", expr)
		}
		want, err := in.search(q, data)
		if err != nil {
			t.Fatalf("interpreter search(%q) = %v", expr, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("compiled %q mismatch (-interpreter +compiled):\n%s", expr, diff)
		}
	}
}

// TestCompiledValueProjectionOrder: over an object of several keys both
// give the values in map order, which varies; compared as multisets.
func TestCompiledValueProjectionOrder(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := decodeJSON(t, compiledTestDocJSON)
	for _, expr := range []string{"obj.*", "obj.*.to_string(@)", "@.*.type(@)"} {
		q, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", expr, err)
		}
		got, done := compiledSearch(in, q, doc)
		if !done {
			t.Fatalf("compiled %q gave up, want a value", expr)
		}
		want, err := in.search(q, doc)
		if err != nil {
			t.Fatalf("interpreter search(%q) = %v", expr, err)
		}
		if diff := cmp.Diff(sortedStrings(want), sortedStrings(got)); diff != "" {
			t.Errorf("compiled %q mismatch (-interpreter +compiled):\n%s", expr, diff)
		}
	}
}

// sortedStrings prints the elements of a list and sorts them.
func sortedStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, el := range list {
		out[i] = fmt.Sprintf("%#v", el)
	}
	slices.Sort(out)
	return out
}

// TestCompileSubset pins which queries compile.
func TestCompileSubset(t *testing.T) {
	tests := []struct {
		giveExpr string
		want     string // "path", "or", "compiled" or "" (the interpreter only)
	}{
		{"a.b[0]", "path"},
		{"a || 'x'", "or"},
		{"a[]", "compiled"},
		{"a[*].b", "compiled"},
		{"a.*", "compiled"},
		{"a[?b == `1`]", "compiled"},
		{"a | b", "compiled"},
		{"{x: a, y: b[1:]}", "compiled"},
		{"sort_by(a, &b)", "compiled"},
		{"!a && b || c", "compiled"},
		{`"".a[]`, "compiled"}, // an empty field name
		{`a || ""`, "compiled"},
		{"&a", ""},
	}
	for _, tt := range tests {
		q, err := Parse(tt.giveExpr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.giveExpr, err)
		}
		got := ""
		switch {
		case q.simple:
			got = "path"
		case q.or:
			got = "or"
		case q.compiled != nil:
			got = "compiled"
		}
		if got != tt.want {
			t.Errorf("Parse(%q) takes %q, want %q", tt.giveExpr, got, tt.want)
		}
	}
}

// queryGen builds a JMESPath expression of the compiled subset from fuzz
// bytes.
type queryGen struct {
	b []byte
}

func (g *queryGen) next() int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c)
}

var (
	genFields   = []string{"a", "b", "c", "s", "n", "list", "obj", "missing", "nested", "people", "name", "tags", "z", "x"}
	genLiterals = []string{"`1`", "`2.5`", "'a'", "`null`", "`true`", "`false`", "`[]`", "`{}`", "`[1, null]`", "''", "`{\"a\": 1}`"}
	genCmp      = []string{"==", "!=", "<", "<=", ">", ">="}
	genFuncs    = []string{"length(%s)", "to_upper(%s)", "keys(%s)", "values(%s)", "to_string(%s)", "to_number(%s)",
		"contains(%s, 'a')", "not_null(%s, 'x')", "type(%s)", "sort(%s)", "reverse(%s)", "max(%s)", "to_array(%s)",
		"join(',', %s)", "starts_with(%s, 'a')", "sort_by(%s, &name)", "map(&name, %s)", "merge(%s, `{}`)",
		"split(%s, 'a')", "lookup(%s, 'a')", "items(%s, 'k', 'v')", "truncate(%s, `2`)"}
)

func (g *queryGen) expr(depth int) string {
	if depth <= 0 {
		switch g.next() % 3 {
		case 0:
			return genFields[g.next()%len(genFields)]
		case 1:
			return genLiterals[g.next()%len(genLiterals)]
		}
		return "@"
	}
	d := depth - 1
	switch g.next() % 20 {
	case 0:
		return genFields[g.next()%len(genFields)]
	case 1:
		return "(" + g.expr(d) + ")." + genFields[g.next()%len(genFields)]
	case 2:
		return "(" + g.expr(d) + ")[" + fmt.Sprint(g.next()%5-2) + "]"
	case 3:
		return "(" + g.expr(d) + ")[]"
	case 4:
		return "(" + g.expr(d) + ")[*]." + genFields[g.next()%len(genFields)]
	case 5:
		return "(" + g.expr(d) + ")[?" + g.expr(d) + "]"
	case 6:
		return "(" + g.expr(d) + ")[" + g.sliceSpec() + "]"
	case 7:
		return "(" + g.expr(d) + " || " + g.expr(d) + ")"
	case 8:
		return "(" + g.expr(d) + " && " + g.expr(d) + ")"
	case 9:
		return "!(" + g.expr(d) + ")"
	case 10:
		return "(" + g.expr(d) + " " + genCmp[g.next()%len(genCmp)] + " " + g.expr(d) + ")"
	case 11:
		return "(" + g.expr(d) + " | " + g.expr(d) + ")"
	case 12:
		return fmt.Sprintf(genFuncs[g.next()%len(genFuncs)], g.expr(d))
	case 13:
		return "[" + g.expr(d) + ", " + g.expr(d) + "]"
	case 14:
		return "{k: " + g.expr(d) + ", l: " + g.expr(d) + "}"
	case 15:
		return "(" + g.expr(d) + ").*"
	case 16:
		return "(" + g.expr(d) + ")[*]"
	case 17:
		return "(" + g.expr(d) + ")[]." + genFields[g.next()%len(genFields)]
	case 18:
		return "(" + g.expr(d) + ").[" + genFields[g.next()%len(genFields)] + ", " + genFields[g.next()%len(genFields)] + "]"
	}
	return genLiterals[g.next()%len(genLiterals)]
}

func (g *queryGen) sliceSpec() string {
	part := func() string {
		if v := g.next() % 7; v < 6 {
			return fmt.Sprint(v - 3)
		}
		return ""
	}
	return part() + ":" + part() + ":" + part()
}

// mapOrdered reports whether the result of expr may follow the iteration
// order of a map (keys, values, value projections), which varies from
// one run of the interpreter to the next.
func mapOrdered(expr string) bool {
	return strings.Contains(expr, "*") || strings.Contains(expr, "keys(") || strings.Contains(expr, "values(")
}

// canonical returns v with every list sorted by its printed elements.
func canonical(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = canonical(x)
		}
		slices.SortFunc(out, func(a, b any) int { return strings.Compare(fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b)) })
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = canonical(x)
		}
		return out
	}
	return v
}

// diffInterpreter compares a compiled result with the interpreter's: it
// returns the interpreter's error, or the difference (-interpreter
// +compiled). When the result may follow map order, any of the
// interpreter's results (a few runs) will do, and results equal up to the
// order of lists too.
func diffInterpreter(in *Interpreter, q *Query, data, got any) (string, error) {
	want, err := in.search(q, data)
	if err != nil {
		return "", err
	}
	diff := cmp.Diff(want, got)
	if diff == "" || !mapOrdered(q.String()) {
		return diff, nil
	}
	for range 100 {
		if again, _ := in.search(q, data); cmp.Equal(again, got) {
			return "", nil
		}
	}
	if cmp.Equal(canonical(want), canonical(got)) {
		return "", nil
	}
	return diff, nil
}

// FuzzCompiled generates queries of the compiled subset and JSON data and
// checks the compiled form against go-jmespath's interpreter: where the
// compiled form answers, the interpreter must give the same value and no
// error. (The compiled form never builds an error itself; it hands every
// failure to the interpreter.)
//
//	go test ./engine/jmespath/ -run '^$' -fuzz FuzzCompiled -fuzztime 60s
func FuzzCompiled(f *testing.F) {
	docs := []string{
		compiledTestDocJSON,
		`{"a": [{"name": "x", "tags": ["a", "b"]}, {"name": "y"}, null, [1, [2]]], "b": {"c": "a"}, "s": "abc"}`,
		`[{"a": 1}, {"a": [1, 2]}, "a", 1.5, null, true]`,
		`{"a": {"b": {"c": [[["x"]]]}}, "x": {"name": "n"}}`,
	}
	for i, doc := range docs {
		for j := range 8 {
			f.Add([]byte{byte(i*31 + j*7), byte(j), byte(i + j*3), 5, 3, 12, 7, 1, 4, byte(j * 11)}, doc)
		}
	}
	in := newTestInterpreter(Options{})
	f.Fuzz(func(t *testing.T, prog []byte, doc string) {
		var data any
		if err := yaml.Unmarshal([]byte(doc), &data); err != nil {
			return
		}
		g := &queryGen{b: prog}
		expr := g.expr(1 + g.next()%5)
		q, err := Parse(expr)
		if err != nil {
			return
		}
		if q.compiled == nil {
			if !q.simple && !q.or {
				t.Fatalf("Parse(%q) did not compile", expr)
			}
			return
		}
		got, done := compiledSearch(in, q, data)
		if !done {
			return
		}
		diff, err := diffInterpreter(in, q, data, got)
		if err != nil {
			t.Fatalf("compiled %q = %#v, but the interpreter fails: %v", expr, got, err)
		}
		if diff != "" {
			t.Fatalf("compiled %q over %s mismatch (-interpreter +compiled):\n%s", expr, doc, diff)
		}
	})
}

// variableRE is Kyverno's pattern of a {{ variable }} in policy text.
var variableRE = regexp.MustCompile(`\{\{(\{[^{}]*\}|[^{}])*\}\}`)

// corpusExpressions returns the JMESPath expressions of a policy: the
// {{ }} contents of every string, and the values of the fields that take a
// bare expression (condition keys, foreach lists, context jmesPath).
func corpusExpressions(v any, field string, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			corpusExpressions(x, k, out)
		}
	case []any:
		for _, x := range t {
			corpusExpressions(x, field, out)
		}
	case string:
		for _, m := range variableRE.FindAllString(t, -1) {
			out[strings.TrimSpace(m[2:len(m)-2])] = true
		}
		switch field {
		case "key", "list", "jmesPath":
			if s := strings.TrimSpace(t); !strings.Contains(s, "{{") && s != "" {
				out[s] = true
			}
		}
	}
}

// corpusData returns the data sets to evaluate a policy's expressions on:
// each resource of its .kyverno-test folder as request.object, once
// without an element and once per container-like object (a map with an
// image) as element.
func corpusData(t *testing.T, policyFile string) []any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(policyFile), ".kyverno-test", "*.yaml"))
	var out []any
	for _, file := range files {
		if filepath.Base(file) == "kyverno-test.yaml" {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for doc := range strings.SplitSeq(string(data), "\n---") {
			var res map[string]any
			if err := yaml.Unmarshal([]byte(doc), &res); err != nil || res["kind"] == nil {
				continue
			}
			request := map[string]any{"object": res, "operation": "CREATE", "userInfo": map[string]any{"username": "u"}}
			out = append(out, map[string]any{"request": request})
			for _, el := range containerLike(res, nil) {
				out = append(out, map[string]any{"request": request, "element": el, "elementIndex": float64(0)})
			}
		}
	}
	return out
}

func containerLike(v any, out []any) []any {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["image"]; ok {
			out = append(out, t)
		}
		for _, x := range t {
			out = containerLike(x, out)
		}
	case []any:
		for _, x := range t {
			out = containerLike(x, out)
		}
	}
	return out
}

// TestCompiledCorpus compiles every expression of the corpus policies and
// evaluates it over the policy's test resources, compiled and interpreted.
func TestCompiledCorpus(t *testing.T) {
	root, ok := testcorpus.Corpus(".")
	if !ok {
		t.Skipf("corpus not present at %s", root)
	}
	files, err := testcorpus.ClusterPolicies(root)
	if err != nil {
		t.Fatal(err)
	}
	in := newTestInterpreter(Options{})
	var total, parsed, simple, compiled, answered, fellBack int
	for _, file := range files {
		var doc any
		if err := yaml.Unmarshal(file.Data, &doc); err != nil {
			continue
		}
		exprs := map[string]bool{}
		corpusExpressions(doc, "", exprs)
		var queries []*Query
		for expr := range exprs {
			total++
			q, err := Parse(expr)
			if err != nil {
				continue
			}
			parsed++
			switch {
			case q.simple || q.or:
				simple++
			case q.compiled != nil:
				compiled++
				queries = append(queries, q)
			default:
				t.Errorf("Parse(%q) (%s) did not compile", expr, file.Path)
			}
		}
		if len(queries) == 0 {
			continue
		}
		for _, data := range corpusData(t, file.Path) {
			for _, q := range queries {
				got, done := compiledSearch(in, q, data)
				if !done {
					fellBack++
					continue
				}
				answered++
				diff, err := diffInterpreter(in, q, data, got)
				if err != nil {
					t.Errorf("compiled %q = %#v (%s), but the interpreter fails: %v", q, got, file.Path, err)
				}
				if diff != "" {
					t.Errorf("compiled %q (%s) mismatch (-interpreter +compiled):\n%s", q, file.Path, diff)
				}
			}
		}
	}
	t.Logf("%d expressions in %d policies: %d parse, %d simple paths or path || literal, %d compiled; %d compiled evaluations answered, %d handed to the interpreter",
		total, len(files), parsed, simple, compiled, answered, fellBack)
	if compiled == 0 || answered == 0 {
		t.Errorf("no corpus expression compiled and answered (compiled %d, answered %d)", compiled, answered)
	}
}

// benchQueries are the queries that reached go-jmespath's interpreter when
// the pod-security and best-practices policies evaluate the benchmark Pod.
var benchQueries = []string{
	"element.securityContext.capabilities.drop[].to_upper(@) || `[]`",
	"element.keys(@)[]",
	"request.object.spec.[ephemeralContainers, initContainers, containers][]",
	"request.object.spec.containers[]",
	"request.object.spec.[ephemeralContainers, initContainers, containers][].securityContext.capabilities.add[]",
	"request.object.spec.[ephemeralContainers, initContainers, containers][].ports[].hostPort",
}

// BenchmarkCompiled compares the compiled form of benchQueries with the
// interpreter, on the benchmark Pod (element: its first container).
func BenchmarkCompiled(b *testing.B) {
	raw, err := os.ReadFile("../testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var pod map[string]any
	if err := yaml.Unmarshal(raw, &pod); err != nil {
		b.Fatal(err)
	}
	element := pod["spec"].(map[string]any)["containers"].([]any)[0]
	data := map[string]any{"request": map[string]any{"object": pod}, "element": element}
	in := New(Options{})
	for i, expr := range benchQueries {
		q, err := Parse(expr)
		if err != nil || q.compiled == nil {
			b.Fatalf("Parse(%q) = %v, compiled %v", expr, err, q != nil && q.compiled != nil)
		}
		if _, done := compiledSearch(in, q, data); !done {
			b.Fatalf("compiled %q gave up", expr)
		}
		b.Run(fmt.Sprintf("q%d/compiled", i+1), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = in.Search(q, data)
			}
		})
		b.Run(fmt.Sprintf("q%d/interpreter", i+1), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = in.search(q, data)
			}
		})
	}
}
