package variables

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

var errNotFound = errors.New("not found")

// scope resolves a query by its exact text, so tests need no interpreter and
// show which expression was asked for. A missing text is an error, as a
// missing key is in Kyverno.
func scope(vals map[string]any) Resolver {
	return func(q *jmespath.Query) (any, error) {
		v, ok := vals[q.String()]
		if !ok {
			return nil, fmt.Errorf("Unknown key %q in path: %w", q.String(), errNotFound)
		}
		return v, nil
	}
}

func mustParse(t *testing.T, s string) *Template {
	t.Helper()
	tmpl, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q) error = %v", s, err)
	}
	return tmpl
}

func TestTemplateRender(t *testing.T) {
	vals := map[string]any{
		"s":                               "text",
		"n":                               float64(3),
		"half":                            2.5,
		"big":                             1e21,
		"small":                           1e-7,
		"neg":                             float64(-12),
		"i64":                             int64(42),
		"jnum":                            json.Number("7.50"),
		"yes":                             true,
		"nothing":                         nil,
		"list":                            []any{float64(1), "a", true},
		"obj":                             map[string]any{"b": float64(1), "a": "<x>&"},
		"k":                               "app",
		"m.app":                           "myapp",
		"m.myapp":                         "deep",
		"inner":                           "app",
		"self":                            "{{ s }}",
		"other":                           "and {{ n }}",
		"hcl":                             `a \{{ b }} {{ c }}`,
		"labels":                          map[string]any{"app": "{{ s }}", "n": float64(1)},
		"items":                           []any{"{{ n }}", "plain"},
		"keyed":                           map[string]any{"{{ s }}": "v"},
		"{a: s}":                          map[string]any{"a": "text"},
		"lower":                           "x",
		"to_upper('x')":                   "X",
		"request.object":                  map[string]any{"kind": "Pod"},
		"request.object.metadata.name":    "new",
		"request.oldObject.metadata.name": "old",
		"request.oldObject.kind":          "Gone",
	}
	tests := []struct {
		name       string
		give       string
		giveDelete bool
		want       any
	}{
		{name: "no variable", give: "plain text", want: "plain text"},
		{name: "empty string", give: "", want: ""},
		{name: "unterminated", give: "{{ s", want: "{{ s"},

		// A string that is exactly one variable keeps the value's type.
		{name: "whole string", give: "{{s}}", want: "text"},
		{name: "whole string spaces", give: "{{   s   }}", want: "text"},
		{name: "whole number", give: "{{ n }}", want: float64(3)},
		{name: "whole bool", give: "{{ yes }}", want: true},
		{name: "whole null", give: "{{ nothing }}", want: nil},
		{name: "whole list", give: "{{ list }}", want: []any{float64(1), "a", true}},
		{name: "whole map", give: "{{ obj }}", want: map[string]any{"b": float64(1), "a": "<x>&"}},
		{name: "whole int64", give: "{{ i64 }}", want: int64(42)},
		{name: "single braces inside", give: "{{ {a: s} }}", want: map[string]any{"a": "text"}},
		{name: "leading space is embedding", give: " {{ n }}", want: " 3"},
		{name: "trailing text is embedding", give: "{{ n }} ", want: "3 "},

		// Embedded values are text: strings as they are, others as JSON.
		{name: "embedded string", give: "a-{{ s }}-b", want: "a-text-b"},
		{name: "embedded whole number", give: "n={{ n }}", want: "n=3"},
		{name: "embedded negative", give: "n={{ neg }}", want: "n=-12"},
		{name: "embedded fraction", give: "n={{ half }}", want: "n=2.5"},
		{name: "embedded large float", give: "n={{ big }}", want: "n=1e+21"},
		{name: "embedded small float", give: "n={{ small }}", want: "n=1e-07"},
		{name: "embedded int64", give: "n={{ i64 }}", want: "n=42"},
		{name: "embedded json number", give: "n={{ jnum }}", want: "n=7.50"},
		{name: "embedded bool", give: "b={{ yes }}", want: "b=true"},
		{name: "embedded null", give: "x{{ nothing }}", want: "xnull"},
		{name: "embedded list", give: "l={{ list }}", want: `l=[1,"a",true]`},
		{name: "embedded map sorted and HTML-escaped", give: "o={{ obj }}", want: `o={"a":"\u003cx\u003e\u0026","b":1}`},
		{name: "two variables", give: "{{ s }}-{{ n }}", want: "text-3"},
		{name: "adjacent variables", give: "{{ n }}{{ half }}", want: "32.5"},
		{name: "same variable twice", give: "{{s}}/{{s}}", want: "text/text"},

		// Escaping.
		{name: "escaped variable", give: `\{{ s }}`, want: "{{ s }}"},
		{name: "escaped and plain", give: `\{{ n }} and {{ n }}`, want: "{{ n }} and 3"},
		{name: "escaped backslash stays escaped", give: `\\{{ n }}`, want: `\{{ n }}`},
		{name: "escaped whole string", give: `\{{n}}`, want: "{{n}}"},

		// Nesting: the inner variable first, then the outer one.
		{name: "nested whole", give: "{{ m.{{ k }} }}", want: "myapp"},
		{name: "nested embedded", give: "x-{{ m.{{ k }} }}", want: "x-myapp"},
		{name: "nested twice", give: "{{ m.{{ m.{{ inner }} }} }}", want: "deep"},
		{name: "nested shallow outer", give: "{{- m.{{ k }} }}", want: "myapp"},

		// A value holding variables is substituted again, unless shallow.
		{name: "embedded value rescanned", give: "x{{ self }}", want: "xtext"},
		{name: "embedded value rescanned with number", give: "{{ s }} {{ other }}", want: "text and 3"},
		{name: "whole string value not rescanned", give: "{{ self }}", want: "{{ s }}"},
		{name: "shallow embedded value kept", give: "x{{- self }}", want: "x{{ s }}"},
		{name: "shallow whole string", give: "{{- self }}", want: "{{ s }}"},
		{name: "shallow first then plain rescans", give: "{{- self }}y{{ s }}", want: "{{ s }}ytext"},
		{name: "plain first then shallow stops", give: "{{ s }}y{{- self }}", want: "texty{{ s }}"},
		{name: "shallow keeps escapes of the value", give: "x{{- hcl }}", want: `xa \{{ b }} {{ c }}`},
		{name: "shallow null", give: "x{{- nothing }}", want: "xnull"},
		{name: "shallow number", give: "x{{- n }}", want: "x3"},

		// Maps and lists a whole-string variable returns are walked.
		{name: "returned map walked", give: "{{ labels }}", want: map[string]any{"app": "text", "n": float64(1)}},
		{name: "returned list walked", give: "{{ items }}", want: []any{float64(3), "plain"}},
		{name: "returned map keys walked", give: "{{ keyed }}", want: map[string]any{"text": "v"}},

		// {{@}} outside a document reads request.object itself.
		{name: "current value", give: "{{@}}", want: map[string]any{"kind": "Pod"}},
		{name: "function around nested variable", give: "{{ to_upper('{{ lower }}') }}", want: "X"},

		// DELETE requests read request.oldObject.
		{name: "delete reads oldObject", give: "{{ request.object.metadata.name }}", giveDelete: true, want: "old"},
		{name: "not delete reads object", give: "{{ request.object.metadata.name }}", want: "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := mustParse(t, tt.give)
			got, err := tmpl.Render(Env{Resolve: scope(vals), Delete: tt.giveDelete})
			if err != nil {
				t.Fatalf("Render(%q) error = %v", tt.give, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%q) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestTemplateCurrentValue(t *testing.T) {
	tests := []struct {
		name       string
		giveTarget bool
		giveDelete bool
		want       string // the query {{@}} resolved to
	}{
		{name: "no target", want: "request.object"},
		{name: "target in scope", giveTarget: true, want: "target"},
		{name: "delete", giveDelete: true, want: "request.oldObject"},
		{name: "delete with target", giveTarget: true, giveDelete: true, want: "target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			resolve := func(q *jmespath.Query) (any, error) {
				if q.String() == "target" && !tt.giveTarget {
					return nil, errNotFound
				}
				got = append(got, q.String())
				return "v", nil
			}
			if _, err := mustParse(t, "{{ @ }}").Render(Env{Resolve: resolve, Delete: tt.giveDelete}); err != nil {
				t.Fatalf("Render({{ @ }}) error = %v", err)
			}
			if got[len(got)-1] != tt.want {
				t.Errorf("Render({{ @ }}) queried %q, want %q", got[len(got)-1], tt.want)
			}
		})
	}
}

func TestTemplateRenderErrors(t *testing.T) {
	vals := map[string]any{
		"space": "a b",
		"nan":   math.NaN(),
		"loop":  "x{{ loop }}",
		"grow":  "{{ grow }}{{ grow }}",
		"rec":   map[string]any{"again": "{{ rec }}"},
		"key":   map[string]any{"{{ n }}": "v"},
		"n":     float64(1),
		"k":     "app",
	}
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
	}{
		{name: "missing whole string", give: "{{ missing }}", wantCode: engine.CodeVariableNotResolved},
		{name: "missing embedded", give: "a {{ missing }}", wantCode: engine.CodeVariableNotResolved},
		{name: "missing inner", give: "{{ m.{{ missing }} }}", wantCode: engine.CodeVariableNotResolved},
		{name: "missing outer", give: "{{ missing.{{ k }} }}", wantCode: engine.CodeVariableNotResolved},
		{name: "outer does not parse with the inner value", give: "{{ x.{{ space }} }}", wantCode: engine.CodeInvalidVariable},
		{name: "value not JSON", give: "x{{ nan }}", wantCode: engine.CodeEvaluation},
		{name: "embedded value embeds itself", give: "x{{ loop }}", wantCode: engine.CodeEvaluation},
		{name: "value doubles", give: "x{{ grow }}", wantCode: engine.CodeEvaluation},
		{name: "returned map holds itself", give: "{{ rec }}", wantCode: engine.CodeEvaluation},
		{name: "returned map key not a string", give: "{{ key }}", wantCode: engine.CodeEvaluation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := mustParse(t, tt.give)
			_, err := tmpl.Render(Env{Resolve: scope(vals)})
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("Render(%q) error = %v, want an *engine.Error", tt.give, err)
			}
			if e.Code != tt.wantCode {
				t.Errorf("Render(%q) error code = %s (%v), want %s", tt.give, e.Code, err, tt.wantCode)
			}
		})
	}
}

// Kyverno's error text reaches rule messages, so it is part of the contract.
func TestTemplateRenderErrorMessage(t *testing.T) {
	_, err := mustParse(t, "name: {{ request.object.missing }}").Render(Env{Resolve: scope(nil)})
	want := `failed to resolve request.object.missing at path : Unknown key "request.object.missing" in path: not found`
	var e *engine.Error
	if !errors.As(err, &e) {
		t.Fatalf("Render() error = %v, want an *engine.Error", err)
	}
	if e.Message != want {
		t.Errorf("Render() message = %q, want %q", e.Message, want)
	}
	if !errors.Is(err, errNotFound) {
		t.Errorf("Render() error = %v, does not wrap the resolver's error", err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantVars bool
		wantExpr []string
	}{
		{name: "plain", give: "plain"},
		{name: "escaped only", give: `\{{ a }}`},
		{name: "braces only", give: "{{"},
		{name: "one", give: "{{ a.b }}", wantVars: true, wantExpr: []string{"a.b"}},
		{name: "shallow", give: "{{- a }}", wantVars: true, wantExpr: []string{"a"}},
		{name: "two", give: "{{a}} {{ b }}", wantVars: true, wantExpr: []string{"a", "b"}},
		{name: "adjacent second found later", give: "{{a}}{{b}}", wantVars: true, wantExpr: []string{"a"}},
		{name: "nested", give: "{{ a.{{ b }} }}", wantVars: true, wantExpr: []string{"b"}},
		{name: "current", give: "{{@}}", wantVars: true, wantExpr: []string{"@"}},
		{name: "function with braces", give: "{{ merge(a, {b: c}) }}", wantVars: true, wantExpr: []string{"merge(a, {b: c})"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := mustParse(t, tt.give)
			if got := tmpl.HasVariables(); got != tt.wantVars {
				t.Errorf("Parse(%q).HasVariables() = %v, want %v", tt.give, got, tt.wantVars)
			}
			var got []string
			for _, v := range tmpl.Vars() {
				if !v.Nested {
					got = append(got, v.Expr)
				}
			}
			if diff := cmp.Diff(tt.wantExpr, got); diff != "" {
				t.Errorf("Parse(%q).Vars() expressions mismatch (-want +got):\n%s", tt.give, diff)
			}
			if got := tmpl.String(); got != tt.give {
				t.Errorf("Parse(%q).String() = %q, want the source", tt.give, got)
			}
		})
	}
}

func TestParseNestedVars(t *testing.T) {
	tmpl := mustParse(t, "x {{ cm.data.{{ request.object.metadata.labels.app }} }}")
	var got []string
	for _, v := range tmpl.Vars() {
		got = append(got, fmt.Sprintf("%s nested=%v", v.Query, v.Nested))
	}
	want := []string{
		"request.object.metadata.labels.app nested=false",
		"cm.data.null nested=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Vars() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseAdjacentVars(t *testing.T) {
	tmpl := mustParse(t, "{{ a }}{{ b }}")
	var got []string
	for _, v := range tmpl.Vars() {
		got = append(got, fmt.Sprintf("%s source=%q nested=%v", v.Query, v.Source, v.Nested))
	}
	want := []string{`a source="{{ a }}" nested=false`, `b source="" nested=true`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Vars() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{name: "bad expression", give: "{{ a. }}"},
		{name: "bad expression embedded", give: "x {{ a[ }} y"},
		{name: "empty", give: "{{}}"},
		{name: "blank", give: "{{   }}"},
		{name: "shallow empty", give: "{{- }}"},
		{name: "second bad", give: "{{ a }} {{ b.. }}"},
		{name: "nested outer bad", give: "{{ a.{{ b }}[ }}"},
		{name: "nested inner bad", give: "{{ a.{{ b. }} }}"},
		{name: "closing braces inside a string literal end the variable", give: "{{ '}}' }}"},
		{name: "unknown function", give: "{{ no_such_function(a) }}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.give)
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error = %v, want an *engine.Error", tt.give, err)
			}
			if e.Code != engine.CodeInvalidVariable {
				t.Errorf("Parse(%q) error code = %s, want %s", tt.give, e.Code, engine.CodeInvalidVariable)
			}
		})
	}
}

func TestIsVariable(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{give: "{{ a }}", want: true},
		{give: "x{{a}}y", want: true},
		{give: "{{ a {{ b }} }}", want: true},
		{give: `\{{ a }}`, want: false},
		{give: "{{ a", want: false},
		{give: "", want: false},
	}
	for _, tt := range tests {
		if got := IsVariable(tt.give); got != tt.want {
			t.Errorf("IsVariable(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"{{ a }}", "x{{ a }}y", `\{{ a }}`, "{{ a.{{ b }} }}", "{{- a }}", "{{@}}", "{{ {a: b} }}",
		"{{a}}{{b}}", "{{{a}}}", "$(./../a)", `\$(x)`, "{{ to_upper('{{@}}') }}", "{{}}", "}}{{",
	} {
		f.Add(s)
	}
	values := []any{nil, "{{ a }}", "x", float64(1), math.Inf(1), []any{"{{ b }}"}, map[string]any{"{{ a }}": "{{ b }}"}}
	f.Fuzz(func(t *testing.T, s string) {
		calls := 0
		resolve := func(q *jmespath.Query) (any, error) {
			calls++
			if calls%5 == 4 {
				return nil, errNotFound
			}
			return values[(len(q.String())+calls)%len(values)], nil
		}
		if tmpl, err := Parse(s); err == nil {
			_, _ = tmpl.Render(Env{Resolve: resolve})
			_, _ = tmpl.Render(Env{Resolve: resolve, Delete: true})
		}
		doc := map[string]any{s: []any{s, map[string]any{"foreach": s, "k": s}}}
		if d, err := ParseDocument(doc); err == nil {
			_, _ = d.Render(Env{Resolve: resolve})
		}
	})
}
