package kyverno

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// yamlSeeds are documents in and out of the fast parser's subset: the unit
// tests and the fuzz corpus compare the fast parser with go-yaml on them.
var yamlSeeds = []string{
	"a: 1\n",
	"a: b\nc: d\n",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: x\nspec:\n  containers:\n  - name: c\n    image: nginx:1.2\n    ports:\n    - containerPort: 80\n",
	"a:\n- 1\n- 2\nb: 3\n",
	"a:\n  - x: 1\n    y: 2\n  - z\n",
	"- - a\n  - b\n- c\n",
	"-\n  a: 1\n-\n- x\n",
	"a: |\n  line1\n  line2\nb: 1\n",
	"a: |-\n  line1\n\n  line3\n\n\nb: 1\n",
	"a: |+\n  line1\n\n\nb: 1\n",
	"a: >\n  folded\n  text\n\n  para\n    indented\n  back\nb: 1\n",
	"a: >-\n  x\n   y\n  z\n",
	"a: |\n  # not a comment\n  x\n# a comment\nb: 2\n",
	"a: |\n  no newline at end",
	"a: |\n    deeper\n  less\n",
	"a: |\n   \n  x\n",
	"a: |\n  x\n   \n  y\n",
	"- |\n  x\n- >\n  y\n",
	"a: 'it''s'\nb: \"q\\\"uote\\n\\t\\u00e9\\x41\\U0001F600\"\n",
	"a: \"\\/\"\n",
	"a: [1, two, \"three\", 'four', {five: 5}, []]\nb: {}\nc: {x: [y, z], w: 'v'}\n",
	"a: [a b, c]\n",
	"a: [a,\n  b]\n",
	"a: {b: http://x:80/y}\n",
	"a: {b:1}\n",
	"a: [x: 1]\n",
	"a: [1,]\n",
	"a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: ~\ng: null\nh: Null\ni: true\nj: False\n",
	"a: 1\nb: -1\nc: +1\nd: 1.5\ne: 1e3\nf: 0x1F\ng: 017\nh: 08\ni: 1_000\nj: 0b101\nk: -0b11\nl: .5\nm: 1e400\nn: -0\no: -0.0\np: 9223372036854775807\nq: 18446744073709551615\nr: 99999999999999999999\n",
	"a: .inf\n",
	"a: -.Inf\n",
	"a: .nan\n",
	"a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\n",
	"a: +\nb: .\nc: -x\nd: 1.2.3\ne: 0o17\nf: 1__0\n",
	"yes: 1\n",
	"1: a\n",
	"1.5: a\n",
	"null: a\n",
	"~: a\n",
	"\"yes\": 1\n'1': 2\n",
	"a: 1\na: 2\n",
	"a: {b: 1, b: 2}\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"<<: {a: 1}\n",
	"? a\n: b\n",
	"a: b: c\n",
	"a: b #c\nd: e# f\n",
	"a: b\n  c\n",
	"a: 'b\n  c'\n",
	"a: \"b\n  c\"\n",
	"a:\tb\n",
	"a: b\r\nc: d\r\n",
	"a: b\n...\n",
	"%YAML 1.1\na: b\n",
	"  a: 1\n  b: 2\n",
	"  a: 1\nb: 2\n",
	"a:\n  b: 1\n c: 2\n",
	"a:\n    b: 1\n  c: 2\n",
	"key   : v\n\"q\"  : w\n",
	"a: @x\n",
	"a: `x\n",
	"a: - b\n",
	"a: -b\n",
	"a: :b\n",
	"a: ?b\n",
	"a: b:\n",
	"a: b:c\n",
	"a:b\n",
	"- a\n b\n",
	"foo\n",
	"\"foo\"\n",
	"[a, b]\n",
	"# only a comment\n",
	"a: \u00e9\u00e8 \U0001F600\n",
	"a: \u0085\n",
	"a: \u2028\n",
	"\ufeffa: b\n",
	"a: \x7f\n",
	"a: \xff\n",
	"a: |2\n  x\n",
	"a: |\n\n",
	"a: |\nb: 1\n",
	"a: \"x\"#c\n",
	"a: 'x' # c\n",
	"a:\n  - |\n    script\n    more\n  - b\n",
	"- name: x\n  value: |\n    multi\n    line\n- name: y\n",
	"list:\n- a\n-  b\n-   c: 1\n    d: 2\n",
	"a: [\"x\", 'y''z', \"\\u00e9\"]\n",
	"a: {\"b\": \"c\"}\n",
	"{\"a\": 1, \"b\": [1, 2.5, \"x\", true, null, {\"c\": {}}]}\n",
	"a: \"\\ud800\"\n",
	"a: \"\\q\"\n",
	"a: >\n\n  x\n",
	"a: >\n  x\n\n\n  y\n",
	"a: >\n  x\n  \n   y\n  z\n",
	"a: |-\n  x\n\n",
	"a: >+\n  x\n\n",
	"k: v\n#c\n  # d\nk2: v2\n",
}

func TestParseFastMatchesGoYAML(t *testing.T) {
	for _, give := range yamlSeeds {
		for _, strict := range []bool{false, true} {
			got, ok := parseFast(give, strict, map[string]string{})
			if !ok {
				continue
			}
			want, err := parseSlow(chunk{data: give, first: 1}, strict)
			if err != nil {
				t.Errorf("parseFast(%q, %v) = %v, but go-yaml fails: %v", give, strict, got, err)
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parseFast(%q, %v) mismatch with go-yaml (-want +got):\n%s", give, strict, diff)
			}
		}
	}
}

// TestParseFastCoverage pins which documents take the fast path, so that
// ordinary manifests do not silently fall back to go-yaml.
func TestParseFastCoverage(t *testing.T) {
	tests := []struct {
		name   string
		give   string
		wantOK bool
	}{
		{name: "pod", give: yamlSeeds[2], wantOK: true},
		{name: "indentless sequence", give: "a:\n- 1\n- 2\nb: 3\n", wantOK: true},
		{name: "compact nested sequence", give: "- - a\n  - b\n- c\n", wantOK: true},
		{name: "literal block", give: "a: |\n  line1\n  line2\nb: 1\n", wantOK: true},
		{name: "folded block", give: "a: >\n  folded\n  text\n\n  para\n    indented\n  back\nb: 1\n", wantOK: true},
		{name: "quoted scalars", give: "a: 'it''s'\nb: \"q\\\"uote\\n\\t\\u00e9\\x41\\U0001F600\"\n", wantOK: true},
		{name: "flow collections", give: "a: [1, two, \"three\", 'four', {five: 5}, []]\nb: {}\nc: {x: [y, z], w: 'v'}\n", wantOK: true},
		{name: "yaml 1.1 booleans", give: "a: yes\nb: No\nc: on\n", wantOK: true},
		{name: "numbers", give: "a: 1\nb: -1\nd: 1.5\ne: 1e3\nf: 0x1F\ng: 017\n", wantOK: true},
		{name: "comments", give: "a: b #c\nd: e# f\n# x\n", wantOK: true},
		{name: "indented root", give: "  a: 1\n  b: 2\n", wantOK: true},
		{name: "unicode", give: "a: \u00e9\u00e8 \U0001F600\n", wantOK: true},
		{name: "anchor", give: "a: &x 1\nb: *x\n", wantOK: false},
		{name: "tag", give: "a: !!str 1\n", wantOK: false},
		{name: "merge key", give: "<<: {a: 1}\n", wantOK: false},
		{name: "multi-line plain", give: "a: b\n  c\n", wantOK: false},
		{name: "multi-line quoted", give: "a: 'b\n  c'\n", wantOK: false},
		{name: "tab", give: "a:\tb\n", wantOK: false},
		{name: "crlf", give: "a: b\r\nc: d\r\n", wantOK: false},
		{name: "boolean key", give: "yes: 1\n", wantOK: false},
		{name: "number key", give: "1: a\n", wantOK: false},
		{name: "nan", give: "a: .nan\n", wantOK: false},
		{name: "mapping in value", give: "a: b: c\n", wantOK: false},
		{name: "bad indentation", give: "a:\n  b: 1\n c: 2\n", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := parseFast(tt.give, false, nil); ok != tt.wantOK {
				t.Errorf("parseFast(%q) ok = %v, want %v", tt.give, ok, tt.wantOK)
			}
		})
	}
}

func TestParseFastDuplicateKeys(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		giveStrict bool
		wantOK     bool
		want       any
	}{
		{name: "last wins", give: "a: 1\na: 2\n", wantOK: true, want: map[string]any{"a": 2.0}},
		{name: "flow last wins", give: "a: {b: 1, b: 2}\n", wantOK: true, want: map[string]any{"a": map[string]any{"b": 2.0}}},
		{name: "strict gives up", give: "a: 1\na: 2\n", giveStrict: true},
		{name: "strict flow gives up", give: "a: {b: 1, b: 2}\n", giveStrict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseFast(tt.give, tt.giveStrict, nil)
			if ok != tt.wantOK {
				t.Fatalf("parseFast(%q, %v) ok = %v, want %v", tt.give, tt.giveStrict, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseFast(%q, %v) mismatch (-want +got):\n%s", tt.give, tt.giveStrict, diff)
			}
		})
	}
}

// FuzzFastYAML checks that whatever the fast parser accepts, go-yaml v2
// (what Kubernetes and Kyverno use) decodes to the same value.
func FuzzFastYAML(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, strict bool) {
		got, ok := parseFast(string(data), strict, map[string]string{})
		if !ok {
			return
		}
		want, err := parseSlow(chunk{data: string(data), first: 1}, strict)
		if err != nil {
			t.Fatalf("parseFast(%q, %v) = %v, but go-yaml fails: %v", data, strict, got, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("parseFast(%q, %v) mismatch with go-yaml (-want +got):\n%s", data, strict, diff)
		}
	})
}

// parseFast parses src with a fresh fastYAML.
func parseFast(src string, dupKeys bool, keys map[string]string) (any, bool) {
	f := fastYAML{keys: keys}
	return f.parse(src, dupKeys)
}
