package jmespath

import (
	"errors"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

// FuzzSearch parses random expressions and evaluates them against a fixed
// document. Parse and Search must return *engine.Error values, never panic,
// and no Kyverno function implementation may panic (panics inside
// go-jmespath itself, like merge() of a non-object, are recovered and
// tolerated).
//
//	go test ./engine/jmespath/ -run '^$' -fuzz FuzzSearch -fuzztime 60s
func FuzzSearch(f *testing.F) {
	seeds := []string{
		"nested.a.b[2].c", "list[?@ == 'a'] | [0]", "obj.*", "nums[::-1]", "{a: s, b: n}",
		"to_upper(s)", "split(s, ' ')", "regex_replace_all('([a-z]+)', s, '$1-')", "regex_match(s, f)",
		"pattern_match('H*d', s)", "label_match(sel, labels)", "to_boolean('True')",
		"add(n, f)", "sum(nums)", "sum(quantities)", "subtract('1Gi', '1Mi')", "multiply('12Ki', f)",
		"divide('1h', `7`)", "modulo(n, `2`)", "round(f, `1`)", "base64_decode(base64_encode(s))",
		"path_canonicalize('/a//b')", "truncate(s, n)", "semver_compare('1.2.3', '>1.0.0')",
		"parse_json('[1,{\"a\":2}]')", "parse_yaml('a: [1, b]')", "lookup(list, `1`)", "lookup(obj, 'team')",
		"items(obj, 'k', 'v')", "object_from_lists(list, nums)", "random('[a-z]{4}')",
		"x509_decode(s)", "time_to_cron(t1)", "time_add(t1, '1h')", "time_parse('2006-01-02', '2021-01-02')",
		"time_utc(t2)", "time_diff(t1, t2)", "time_before(t1, t2)", "time_between(t1, t1, t2)",
		"time_truncate(t1, '1h')", "time_since('', t1, '')", "time_now()", "image_normalize('nginx')",
		"is_external_url('http://10.0.0.1')", "sha256(s)", "sha1(s)", "md5(s)", "compare(s, 'a')",
		"equal_fold(s, 'hello world')", "replace(s, 'l', 'L', `1`)", "trim(s, 'Hd')", "sort_by(items(obj, 'k', 'v'), &k)",
		"merge(obj, sel)", "length(mixed)", "max(nums)", "not_null(nope, s)",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	in := newTestInterpreter(Options{})
	doc := fuzzDoc()
	f.Fuzz(func(t *testing.T, expr string) {
		q, err := Parse(expr)
		if err != nil {
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error = %T %v, want *engine.Error", expr, err, err)
			}
			return
		}
		_, err = in.Search(q, doc)
		if err == nil {
			return
		}
		var e *engine.Error
		if !errors.As(err, &e) {
			t.Fatalf("Search(%q) error = %T %v, want *engine.Error", expr, err, err)
		}
		var p *panicError
		if errors.As(err, &p) && p.function != "" {
			t.Fatalf("Search(%q) panicked in %s: %v", expr, p.function, p.value)
		}
	})
}
