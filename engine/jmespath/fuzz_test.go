package jmespath

import (
	"errors"
	"reflect"
	"testing"

	gojmespath "github.com/kyverno/go-jmespath"

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

// FuzzParseGuard checks the limits Parse applies before go-jmespath's
// parser (guard.go), with small limits so that short inputs reach them.
// parseAST never panics and its errors are *engine.Error values; an
// expression it accepts parses to go-jmespath's own tree; one it refuses
// for its size is larger than the limit, one refused for the depth of its
// tree has a tree deeper than the limit; and the nesting it counts is at
// least the nesting of the tree (the not, &, call, multiselect, filter and
// projection nodes along a branch), so that the scan of the text misses no
// bracket or operator go-jmespath's parser recurses on, strings and
// literals included.
//
//	go test ./engine/jmespath/ -run '^$' -fuzz FuzzParseGuard -fuzztime 60s -fuzzminimizetime 5s
func FuzzParseGuard(f *testing.F) {
	seeds := []string{
		"((((a))))", "!!!!!!a", "[[[[a]]]]", "a[*][*][*][*]", "a[:][:][:]", "a.*.*.*.*", "*.*.*",
		"sort_by(a, & & & b)", "a || a || a || a", "a.a.a.a.a.a", "a[0][0][0]", "a[][][]",
		"{a: {b: {c: d}}}", "a[?b[?c[?d]]]", "f(g(h(i(a))))", "to_upper(to_lower(trim(a, 'x')))",
		"'(((('", `"((((".a`, "`[[[[1]]]]`", `'\'(((('`, `'a\\' (((( '`, "`\"\\`((((\"`",
		"a[?!b == !c]", "{a: !b, c: & d}", "[!a, !b] | [0]", "a[*].[!b]", "![*].a", "a[-1][ 2 ]",
		"length(a) > `3` && !contains(b, 'x')", "a.\"b\".c[?d == 'e'].f | [0]",
		"@", "", "(", "[", "'", "\"", "`", "a[?", "f(", "!", "&",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	lim := exprLimits{bytes: 256, nesting: 12, depth: 24}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 4*lim.bytes {
			return // go-jmespath itself runs on the input below: keep it small
		}
		ast, err := parseAST(expr, lim)
		raw, rawErr, panicked := rawParse(expr)
		if panicked && err == nil {
			t.Fatalf("parseAST(%q) accepted what go-jmespath panics on", expr)
		}
		if panicked {
			return
		}
		if err != nil {
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("parseAST(%q) error = %T %v, want *engine.Error", expr, err, err)
			}
			var le *LimitError
			if !errors.As(err, &le) {
				if rawErr == nil {
					t.Fatalf("parseAST(%q) = %v, but go-jmespath parses it", expr, err)
				}
				return
			}
			switch le.Limit {
			case "MaxExpressionBytes":
				if len(expr) <= lim.bytes {
					t.Fatalf("parseAST(%q) = %v for %d bytes, within the limit %d", expr, err, len(expr), lim.bytes)
				}
			case "MaxExpressionDepth":
				if rawErr != nil || treeDepth(raw) <= lim.depth {
					t.Fatalf("parseAST(%q) = %v, but go-jmespath's tree is %d deep (%v)", expr, err, treeDepth(raw), rawErr)
				}
			case "MaxExpressionNesting":
			default:
				t.Fatalf("parseAST(%q) = %v: unknown limit", expr, err)
			}
			return
		}
		if rawErr != nil {
			t.Fatalf("parseAST(%q) accepted what go-jmespath refuses: %v", expr, rawErr)
		}
		if !reflect.DeepEqual(ast, raw) {
			t.Fatalf("parseAST(%q) = %v, want go-jmespath's %v", expr, ast, raw)
		}
		if n := treeNesting(raw); n > 0 {
			err := checkText(expr, exprLimits{bytes: lim.bytes, nesting: n - 1})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != "MaxExpressionNesting" {
				t.Fatalf("checkText(%q) counts a nesting below %d, the nesting of its tree %v", expr, n, raw)
			}
		}
		// Parse with the real limits must not panic either.
		_, _ = Parse(expr)
	})
}

// rawParse is go-jmespath's parser, with its panics recovered.
func rawParse(expr string) (ast gojmespath.ASTNode, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	ast, err = gojmespath.NewParser().Parse(expr)
	return ast, err, false
}

// treeDepth is the depth of a tree, recursively (the inputs are small).
func treeDepth(n gojmespath.ASTNode) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, treeDepth(c))
	}
	return d + 1
}

// treeNesting counts, along the branch where they are most, the nodes whose
// tokens checkText counts while the tokens below them are scanned: !, &,
// function calls and multiselects (their brackets), the condition of a
// filter (inside [? ]) and the right side of projections other than
// flattens (after the [ or * that stays counted).
func treeNesting(n gojmespath.ASTNode) int {
	self := 0
	switch n.NodeType {
	case gojmespath.ASTNotExpression, gojmespath.ASTExpRef, gojmespath.ASTFunctionExpression,
		gojmespath.ASTMultiSelectList, gojmespath.ASTMultiSelectHash:
		self = 1
	}
	best := 0
	for i, c := range n.Children {
		extra := 0
		switch {
		case n.NodeType == gojmespath.ASTFilterProjection && i >= 1:
			extra = 1
		case n.NodeType == gojmespath.ASTValueProjection && i == 1:
			extra = 1
		case n.NodeType == gojmespath.ASTProjection && i == 1 && n.Children[0].NodeType != gojmespath.ASTFlatten:
			extra = 1
		}
		best = max(best, extra+treeNesting(c))
	}
	return self + best
}
