package variables

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/jmespath"
)

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		give any
		want string
	}{
		{name: "null", give: nil, want: "null"},
		{name: "bool", give: false, want: "false"},
		{name: "whole float", give: float64(3), want: "3"},
		{name: "negative zero", give: math.Copysign(0, -1), want: "-0"},
		{name: "fraction", give: 0.1, want: "0.1"},
		{name: "large", give: 123456789012.0, want: "123456789012"},
		{name: "below 1e21", give: 1e20, want: "100000000000000000000"},
		{name: "from 1e21", give: 1e21, want: "1e+21"},
		{name: "below 1e-6", give: 1.5e-7, want: "1.5e-07"},
		{name: "1e-6", give: 1e-6, want: "0.000001"},
		{name: "float32", give: float32(0.5), want: "0.5"},
		{name: "int", give: 7, want: "7"},
		{name: "int64", give: int64(-7), want: "-7"},
		{name: "uint8", give: uint8(255), want: "255"},
		{name: "json number", give: json.Number("1.50"), want: "1.50"},
		{name: "string escapes", give: "a\"b\\c\n\r\t\x01<>&\u2028\u2029é\b\f", want: `"a\"b\\c\n\r\t\u0001\u003c\u003e\u0026\u2028\u2029é\u0008\u000c"`},
		{name: "invalid utf8", give: "a\xffb", want: `"a\ufffdb"`},
		{name: "map sorted", give: map[string]any{"b": 1, "a": []any{}, "c": map[string]any{}}, want: `{"a":[],"b":1,"c":{}}`},
		{name: "nil list", give: []any(nil), want: "null"},
		{name: "nil map", give: map[string]any(nil), want: "null"},
		{name: "other types through encoding/json", give: []string{"x"}, want: `["x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendJSON(nil, tt.give)
			if err != nil {
				t.Fatalf("appendJSON(%#v) error = %v", tt.give, err)
			}
			if string(got) != tt.want {
				t.Errorf("appendJSON(%#v) = %s, want %s", tt.give, got, tt.want)
			}
		})
	}
}

func TestAppendJSONErrors(t *testing.T) {
	for _, give := range []any{math.NaN(), math.Inf(-1), []any{math.Inf(1)}, map[string]any{"a": math.NaN()}, make(chan int)} {
		if got, err := appendJSON(nil, give); err == nil {
			t.Errorf("appendJSON(%#v) = %s, want an error", give, got)
		}
	}
}

func TestCurrentExpr(t *testing.T) {
	tests := []struct {
		name       string
		givePath   string
		givePrefix string
		want       string
	}{
		{name: "root", givePath: "", givePrefix: "request.object", want: "request.object"},
		{name: "two elements", givePath: "/validate/pattern", givePrefix: "request.object", want: "request.object"},
		{name: "pattern", givePath: "/validate/pattern/metadata/name", givePrefix: "request.object", want: "request.object.metadata.name"},
		{name: "index", givePath: "/mutate/patchStrategicMerge/spec/containers/0/image", givePrefix: "request.object", want: "request.object.spec.containers[0].image"},
		{name: "target", givePath: "/mutate/patchStrategicMerge/data/x", givePrefix: "target", want: "target.data.x"},
		{name: "foreach", givePath: "/validate/foreach/1/pattern/spec/x", givePrefix: "request.object", want: "request.object.spec.x"},
		{name: "escaped slash", givePath: `/v/p/metadata/annotations/a\/b`, givePrefix: "request.object", want: `request.object.metadata.annotations."a/b"`},
		{name: "quotes dropped", givePath: `/v/p/"a/b"/c`, givePrefix: "request.object", want: `request.object."a/b".c`},
		{name: "anchor", givePath: "/v/p/spec/(name)/x", givePrefix: "request.object", want: `request.object.spec."(name)".x`},
		{name: "underscore and digits", givePath: "/v/p/_a1/b_2", givePrefix: "request.object", want: "request.object._a1.b_2"},
		{name: "leading digit not an index", givePath: "/v/p/1a", givePrefix: "request.object", want: `request.object."1a"`},
		{name: "quote and backslash escaped", givePath: `/v/p/a\"b\\c`, givePrefix: "request.object", want: `request.object."a\"b\\c"`},
		{name: "control characters", givePath: "/v/p/a\tb\x01", givePrefix: "request.object", want: `request.object."a\tb\u0001"`},
		{name: "unicode kept", givePath: "/v/p/é", givePrefix: "request.object", want: `request.object."é"`},
		{name: "trailing backslash", givePath: `/v/p/a\`, givePrefix: "request.object", want: "request.object.\"a\uFFFD\""},
		{name: "invalid utf8 drops the element", givePath: "/v/p/a/b\xff", givePrefix: "request.object", want: "request.object.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := currentExpr(tt.givePath, tt.givePrefix); got != tt.want {
				t.Errorf("currentExpr(%q, %q) = %s, want %s", tt.givePath, tt.givePrefix, got, tt.want)
			}
		})
	}
}

func TestUserInfoVar(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string // Expr of the variable found
	}{
		{name: "none", give: "{{ request.object.metadata.name }}"},
		{name: "userInfo", give: "{{ request.userInfo.username }}", want: "request.userInfo.username"},
		{name: "userInfo whole", give: "{{request.userInfo}}", want: "request.userInfo"},
		{name: "roles", give: "x {{ request.roles }}", want: "request.roles"},
		{name: "clusterRoles", give: "{{ request.clusterRoles[0] }}", want: "request.clusterRoles[0]"},
		{name: "serviceAccountName", give: "{{serviceAccountName}}", want: "serviceAccountName"},
		{name: "serviceAccountNamespace in a call", give: "{{ to_upper(serviceAccountNamespace) }}", want: "to_upper(serviceAccountNamespace)"},
		{name: "after a dot", give: "{{ request.object.serviceAccountName }}"},
		{name: "not a word boundary", give: "{{ request.userInfoX }}"},
		{name: "prefix only", give: "{{ request.user }}"},
		{name: "second variable", give: "{{ a }} {{ request.roles }}", want: "request.roles"},
		{name: "nested outer not checked", give: "{{ request.userInfo.{{ a }} }}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := UserInfoVar(mustParse(t, tt.give).Vars())
			if ok != (tt.want != "") || v.Expr != tt.want {
				t.Errorf("UserInfoVar(%q) = %q, %v, want %q", tt.give, v.Expr, ok, tt.want)
			}
		})
	}
}

func TestReferences(t *testing.T) {
	tests := []struct {
		give      string
		giveNames []string
		want      bool
	}{
		{give: "request.userInfo.groups", giveNames: []string{"request.userInfo"}, want: true},
		{give: "request.userInfo", giveNames: []string{"request.userInfo"}, want: true},
		{give: "contains(request.roles, 'x')", giveNames: []string{"request.userInfo", "request.roles"}, want: true},
		{give: "object.request.userInfo", giveNames: []string{"request.userInfo"}, want: false},
		{give: "request.userInfoX", giveNames: []string{"request.userInfo"}, want: false},
		{give: "requestXuserInfo", giveNames: []string{"request.userInfo"}, want: false},
		{give: "request.object", giveNames: nil, want: false},
	}
	for _, tt := range tests {
		q, err := jmespath.Parse(tt.give)
		if err != nil {
			t.Fatalf("jmespath.Parse(%q) error = %v", tt.give, err)
		}
		if got := References(q, tt.giveNames...); got != tt.want {
			t.Errorf("References(%q, %q) = %v, want %v", tt.give, tt.giveNames, got, tt.want)
		}
	}
	if References(nil, "a") {
		t.Errorf("References(nil, a) = true, want false")
	}
}

func TestRemoveAnchors(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{give: "", want: ""},
		{give: "/a/(b)/=(c)/^(d)/X(e)/+(f)/<(g)/h", want: "/a/b/c/d/e/f/g/h"},
		{give: "/a/()/b", want: "/a/()/b"},
		{give: "a/./b/../c", want: "a/c"},
	}
	for _, tt := range tests {
		if got := removeAnchors(tt.give); got != tt.want {
			t.Errorf("removeAnchors(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestReferenceOperator(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{give: ">=./a", want: ">="},
		{give: "<=./a", want: "<="},
		{give: ">./a", want: ">"},
		{give: "<./a", want: "<"},
		{give: "!./a", want: "!"},
		{give: "1-5", want: "-"},
		{give: "1!-5", want: "!-"},
		{give: "./a", want: ""},
		{give: ">", want: ""},
	}
	for _, tt := range tests {
		if got := referenceOperator(tt.give); got != tt.want {
			t.Errorf("referenceOperator(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestScan(t *testing.T) {
	type match struct{ Match, Prefix, Text, Expr string }
	tests := []struct {
		give string
		want []match
	}{
		{give: "{{a}}", want: []match{{Match: "{{a}}", Text: "{{a}}", Expr: "a"}}},
		{give: "x{{ a }}", want: []match{{Match: "x{{ a }}", Prefix: "x", Text: "{{ a }}", Expr: "a"}}},
		{give: "{{a}}{{b}}", want: []match{{Match: "{{a}}", Text: "{{a}}", Expr: "a"}}},
		{give: "{{a}} {{b}}", want: []match{{Match: "{{a}}", Text: "{{a}}", Expr: "a"}, {Match: " {{b}}", Prefix: " ", Text: "{{b}}", Expr: "b"}}},
		{give: "{{ a {{ b }} }}", want: []match{{Match: " {{ b }}", Prefix: " ", Text: "{{ b }}", Expr: "b"}}},
		{give: "{{{a}}", want: []match{{Match: "{{{a}}", Prefix: "{", Text: "{{a}}", Expr: "a"}}},
		{give: "{{ {a: b} }}", want: []match{{Match: "{{ {a: b} }}", Text: "{{ {a: b} }}", Expr: "{a: b}"}}},
		{give: "{{ - a }}", want: []match{{Match: "{{ - a }}", Text: "{{ - a }}", Expr: "a"}}},
		{give: `\{{a}}`},
		{give: "{{a"},
	}
	for _, tt := range tests {
		var got []match
		for _, v := range scan(tt.give) {
			got = append(got, match{v.match, v.prefix, v.text, v.expr})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("scan(%q) mismatch (-want +got):\n%s", tt.give, diff)
		}
	}
}
