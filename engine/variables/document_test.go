package variables

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

// decode turns JSON text into a document; tests write documents as JSON to
// keep them readable.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("json.Unmarshal(%s) error = %v", s, err)
	}
	return v
}

func TestDocumentRender(t *testing.T) {
	vals := map[string]any{
		"name":                             "web",
		"n":                                float64(2),
		"nothing":                          nil,
		"obj":                              map[string]any{"a": float64(1)},
		"labels":                           map[string]any{"team": "{{ name }}"},
		"tmpl":                             "{{ name }}",
		"keyname":                          "app",
		"cm.app":                           "from-cm",
		"request.object.metadata.labels.x": "label-x",
		"request.object.spec.containers[0].image":        "nginx",
		"request.object.spec.\"(name)\"":                 "anchored",
		"request.object.metadata.annotations.\"a/b\"":    "slashed",
		"request.object.metadata.annotations.\"app.io\"": "dotted",
		"request.object.metadata.annotations.\"x-y\"":    "dashed",
		"request.object.spec.containers[1]":              "second",
		"request.object.metadata.labels.foo":             "FOO",
		"to_upper('FOO')":                                "upper-foo",
		"request.object":                                 "root",
		"request.object.app":                             "pattern-app",
		"request.oldObject.metadata.name":                "old-name",
		"request.object.metadata.name":                   "new-name",
	}
	tests := []struct {
		name       string
		give       string
		giveBase   string
		giveDelete bool
		want       string
	}{
		{name: "no variables", give: `{"a": [1, "x", true, null], "b": {"c": "d"}}`, want: `{"a": [1, "x", true, null], "b": {"c": "d"}}`},
		{name: "scalar root", give: `"{{ n }}"`, want: `2`},
		{name: "string leaves", give: `{"a": "{{ name }}", "b": ["x-{{ n }}", 3], "c": {"d": "{{ obj }}"}}`, want: `{"a": "web", "b": ["x-2", 3], "c": {"d": {"a": 1}}}`},
		{name: "whole string null", give: `{"a": "{{ nothing }}"}`, want: `{"a": null}`},
		{name: "escaped leaf", give: `{"a": "\\{{ name }}", "b": "{{ name }}"}`, want: `{"a": "{{ name }}", "b": "web"}`},
		{name: "escaped only", give: `{"a": "\\{{ name }}"}`, want: `{"a": "{{ name }}"}`},
		{name: "key variable", give: `{"{{ keyname }}": "v", "k": "w"}`, want: `{"app": "v", "k": "w"}`},
		{name: "key embedded", give: `{"x-{{ keyname }}": "{{ name }}"}`, want: `{"x-app": "web"}`},
		{name: "key null kept", give: `{"{{ nothing }}": "v"}`, want: `{"{{ nothing }}": "v"}`},
		{name: "key escaped", give: `{"\\{{ keyname }}": "v"}`, want: `{"{{ keyname }}": "v"}`},
		{name: "nested variable", give: `{"a": "{{ cm.{{ keyname }} }}"}`, want: `{"a": "from-cm"}`},
		{name: "returned map walked", give: `{"a": "{{ labels }}"}`, want: `{"a": {"team": "web"}}`},
		{name: "returned string not walked", give: `{"a": "{{ tmpl }}"}`, want: `{"a": "{{ name }}"}`},
		{name: "embedded value rescanned", give: `{"a": "x{{ tmpl }}"}`, want: `{"a": "xweb"}`},
		{name: "shallow", give: `{"a": "x{{- tmpl }}"}`, want: `{"a": "x{{ name }}"}`},
		{name: "delete", give: `{"a": "{{ request.object.metadata.name }}"}`, giveDelete: true, want: `{"a": "old-name"}`},

		// {{@}}: the path past its first two elements, under request.object.
		{name: "current value in pattern", give: `{"validate": {"pattern": {"metadata": {"labels": {"x": "{{@}}"}}}}}`, want: `{"validate": {"pattern": {"metadata": {"labels": {"x": "label-x"}}}}}`},
		{name: "current value in list", give: `{"mutate": {"patchStrategicMerge": {"spec": {"containers": [{"image": "{{ @ }}"}]}}}}`, want: `{"mutate": {"patchStrategicMerge": {"spec": {"containers": [{"image": "nginx"}]}}}}`},
		{name: "current value nested", give: `{"validate": {"pattern": {"metadata": {"labels": {"foo": "{{ to_upper('{{@}}') }}"}}}}}`, want: `{"validate": {"pattern": {"metadata": {"labels": {"foo": "upper-foo"}}}}}`},
		{name: "current value anchor quoted", give: `{"validate": {"pattern": {"spec": {"(name)": "{{@}}"}}}}`, want: `{"validate": {"pattern": {"spec": {"(name)": "anchored"}}}}`},
		{name: "current value slash key", give: `{"v": {"p": {"metadata": {"annotations": {"a/b": "{{@}}"}}}}}`, want: `{"v": {"p": {"metadata": {"annotations": {"a/b": "slashed"}}}}}`},
		{name: "current value dotted key", give: `{"v": {"p": {"metadata": {"annotations": {"app.io": "{{@}}"}}}}}`, want: `{"v": {"p": {"metadata": {"annotations": {"app.io": "dotted"}}}}}`},
		{name: "current value dashed key", give: `{"v": {"p": {"metadata": {"annotations": {"x-y": "{{@}}"}}}}}`, want: `{"v": {"p": {"metadata": {"annotations": {"x-y": "dashed"}}}}}`},
		{name: "current value past foreach", give: `{"validate": {"foreach": [{"pattern": {"spec": {"containers": [0, "{{@}}"]}}}]}}`, want: `{"validate": {"foreach": [{"pattern": {"spec": {"containers": [0, "second"]}}}]}}`},
		{name: "current value at base", give: `{"metadata": {"labels": {"x": "{{@}}"}}}`, giveBase: "/validate/pattern", want: `{"metadata": {"labels": {"x": "label-x"}}}`},
		{name: "current value in a pattern parsed alone skips its first two keys", give: `{"metadata": {"labels": {"app": "{{@}}"}}}`, want: `{"metadata": {"labels": {"app": "pattern-app"}}}`},
		{name: "current value near root", give: `{"a": "{{@}}"}`, want: `{"a": "root"}`},

		// $( ) references are resolved at parse time.
		{name: "reference", give: `{"live": {"port": "$(./../../ready/port)"}, "ready": {"port": "3000"}}`, want: `{"live": {"port": "3000"}, "ready": {"port": "3000"}}`},
		{name: "reference with operator", give: `{"live": {"port": "$(<=./../../ready/port)"}, "ready": {"port": "3000"}}`, want: `{"live": {"port": "<=3000"}, "ready": {"port": "3000"}}`},
		{name: "reference to a number with operator", give: `{"live": {"port": "$(>./../../ready/port)"}, "ready": {"port": 3000}}`, want: `{"live": {"port": ">3000.000000"}, "ready": {"port": 3000}}`},
		{name: "reference through anchor", give: `{"spec": {"(name)": "x", "copy": "$(./../name)"}}`, want: `{"spec": {"(name)": "x", "copy": "x"}}`},
		{name: "reference absolute", give: `{"name": "rule", "v": "applied=$(/name)"}`, want: `{"name": "rule", "v": "applied=rule"}`},
		{name: "reference then variable", give: `{"a": "{{ name }}", "b": "$(./../a)"}`, want: `{"a": "web", "b": "web"}`},
		{name: "reference to a map reads its key", give: `{"a": "$(./../b)", "b": {"c": 1}}`, want: `{"a": "c", "b": {"c": 1}}`},
		{name: "escaped reference", give: `{"a": "k=\\$(POD_NAME), r=$(./../b)", "b": "x"}`, want: `{"a": "k=$(POD_NAME), r=x", "b": "x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocumentAt(decode(t, tt.give), tt.giveBase)
			if err != nil {
				t.Fatalf("ParseDocument(%s) error = %v", tt.give, err)
			}
			resolve := scope(vals)
			got, err := d.Render(Env{Resolve: func(q *jmespath.Query) (any, error) {
				if q.String() == "target" {
					return nil, errNotFound
				}
				return resolve(q)
			}, Delete: tt.giveDelete})
			if err != nil {
				t.Fatalf("Render(%s) error = %v", tt.give, err)
			}
			if diff := cmp.Diff(decode(t, tt.want), got); diff != "" {
				t.Errorf("Render(%s) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestDocumentRenderErrors(t *testing.T) {
	vals := map[string]any{"n": float64(1), "obj": map[string]any{}}
	tests := []struct {
		name     string
		give     string
		giveBase string
		wantCode engine.Code
		wantPath string
	}{
		{name: "root", give: `"{{ missing }}"`, wantCode: engine.CodeVariableNotResolved, wantPath: ""},
		{name: "leaf", give: `{"spec": {"containers": [{"image": "{{ missing }}"}]}}`, wantCode: engine.CodeVariableNotResolved, wantPath: "/spec/containers/0/image"},
		{name: "slash in key", give: `{"a/b": "{{ missing }}"}`, wantCode: engine.CodeVariableNotResolved, wantPath: `/a\/b`},
		{name: "key is the map's path", give: `{"m": {"{{ missing }}": 1}}`, wantCode: engine.CodeVariableNotResolved, wantPath: "/m"},
		{name: "key not a string", give: `{"m": {"{{ n }}": 1}}`, wantCode: engine.CodeEvaluation, wantPath: "/m"},
		{name: "key a map", give: `{"m": {"{{ obj }}": 1}}`, wantCode: engine.CodeEvaluation, wantPath: "/m"},
		{name: "base", give: `{"message": "{{ missing }}"}`, giveBase: "/validate", wantCode: engine.CodeVariableNotResolved, wantPath: "/validate/message"},
		{name: "first in sorted order", give: `{"b": "{{ missing }}", "a": "{{ n }}{{ alsomissing }}"}`, wantCode: engine.CodeVariableNotResolved, wantPath: "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocumentAt(decode(t, tt.give), tt.giveBase)
			if err != nil {
				t.Fatalf("ParseDocument(%s) error = %v", tt.give, err)
			}
			_, err = d.Render(Env{Resolve: scope(vals)})
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("Render(%s) error = %v, want an *engine.Error", tt.give, err)
			}
			if e.Code != tt.wantCode || e.Path != tt.wantPath {
				t.Errorf("Render(%s) error = %s at %q (%v), want %s at %q", tt.give, e.Code, e.Path, err, tt.wantCode, tt.wantPath)
			}
		})
	}
}

func TestParseDocumentErrors(t *testing.T) {
	tests := []struct {
		name      string
		give      string
		wantPaths []string // of the errors, all CodeInvalidVariable
	}{
		{name: "root", give: `"{{ a. }}"`, wantPaths: []string{""}},
		{name: "leaf", give: `{"spec": {"containers": [{"image": "{{ a. }}"}]}}`, wantPaths: []string{".spec.containers[0].image"}},
		{name: "odd key", give: `{"metadata": {"labels": {"app.io/name": "{{ a. }}"}}}`, wantPaths: []string{`.metadata.labels["app.io/name"]`}},
		{name: "key", give: `{"m": {"{{ a. }}": 1}}`, wantPaths: []string{`.m["{{ a. }}"]`}},
		{name: "all errors sorted", give: `{"b": "{{ b. }}", "a": ["{{ }}"], "c": "{{ x.{{ y }}[ }}"}`, wantPaths: []string{".a[0]", ".b", ".c"}},
		{name: "reference not found", give: `{"a": "$(./../missing)"}`, wantPaths: []string{".a"}},
		{name: "reference to a number", give: `{"a": "$(./../b)", "b": 1}`, wantPaths: []string{".a"}},
		{name: "reference and variable errors", give: `{"a": "$(./../missing)", "b": "{{ b. }}"}`, wantPaths: []string{".a", ".b"}},
		{name: "reference empty", give: `{"a": "$(>)"}`, wantPaths: []string{".a"}},
		{name: "reference operator on a bool", give: `{"a": "$(<./../b)", "b": true}`, wantPaths: []string{".a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDocument(decode(t, tt.give))
			var got []string
			for _, e := range engine.As(err) {
				if e.Code != engine.CodeInvalidVariable {
					t.Errorf("ParseDocument(%s) error code = %s (%v), want %s", tt.give, e.Code, e, engine.CodeInvalidVariable)
				}
				got = append(got, e.Path)
			}
			if diff := cmp.Diff(tt.wantPaths, got); diff != "" {
				t.Errorf("ParseDocument(%s) error paths mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestDocumentStatic(t *testing.T) {
	tests := []struct {
		name         string
		give         string
		wantVars     bool
		wantOriginal bool // Render returns the parsed value itself
	}{
		{name: "plain", give: `{"a": ["x", 1, {"b": null}]}`, wantOriginal: true},
		{name: "escaped", give: `{"a": ["\\{{ x }}"]}`},
		{name: "escaped reference", give: `{"a": "\\$(x)"}`},
		{name: "variable", give: `{"a": {"b": "{{ x }}"}, "c": "d"}`, wantVars: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := decode(t, tt.give)
			d, err := ParseDocument(doc)
			if err != nil {
				t.Fatalf("ParseDocument(%s) error = %v", tt.give, err)
			}
			if got := d.HasVariables(); got != tt.wantVars {
				t.Errorf("ParseDocument(%s).HasVariables() = %v, want %v", tt.give, got, tt.wantVars)
			}
			got, err := d.Render(Env{Resolve: scope(map[string]any{"x": "y"})})
			if err != nil {
				t.Fatalf("Render(%s) error = %v", tt.give, err)
			}
			same := reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(doc).UnsafePointer()
			if same != tt.wantOriginal {
				t.Errorf("Render(%s) returned the input itself = %v, want %v", tt.give, same, tt.wantOriginal)
			}
			if diff := cmp.Diff(decode(t, tt.give), doc); diff != "" {
				t.Errorf("ParseDocument(%s) then Render modified the input (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestDocumentRenderKeepsInputs(t *testing.T) {
	give := `{"a": {"b": "{{ labels }}", "c": ["{{ n }}"], "{{ k }}": 1}, "d": {"e": "f"}}`
	doc := decode(t, give)
	labels := map[string]any{"x": "{{ n }}", "y": []any{"{{ n }}"}}
	vals := map[string]any{"labels": labels, "n": "two", "k": "key"}
	d, err := ParseDocument(doc)
	if err != nil {
		t.Fatalf("ParseDocument(%s) error = %v", give, err)
	}
	for range 2 {
		got, err := d.Render(Env{Resolve: scope(vals)})
		if err != nil {
			t.Fatalf("Render(%s) error = %v", give, err)
		}
		want := decode(t, `{"a": {"b": {"x": "two", "y": ["two"]}, "c": ["two"], "key": 1}, "d": {"e": "f"}}`)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Render(%s) mismatch (-want +got):\n%s", give, diff)
		}
	}
	if diff := cmp.Diff(decode(t, give), doc); diff != "" {
		t.Errorf("Render(%s) modified the document (-want +got):\n%s", give, diff)
	}
	wantLabels := map[string]any{"x": "{{ n }}", "y": []any{"{{ n }}"}}
	if diff := cmp.Diff(wantLabels, labels); diff != "" {
		t.Errorf("Render(%s) modified a resolved value (-want +got):\n%s", give, diff)
	}
}

func TestParseDocumentTyped(t *testing.T) {
	type rule struct {
		Message string            `json:"message"`
		Labels  map[string]string `json:"labels"`
	}
	d, err := ParseDocument(rule{Message: "hi {{ name }}", Labels: map[string]string{"a": "{{ name }}"}})
	if err != nil {
		t.Fatalf("ParseDocument(rule) error = %v", err)
	}
	got, err := d.Render(Env{Resolve: scope(map[string]any{"name": "web"})})
	if err != nil {
		t.Fatalf("Render() error = %v", err)
	}
	want := map[string]any{"message": "hi web", "labels": map[string]any{"a": "web"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render() mismatch (-want +got):\n%s", diff)
	}
}

func TestDocumentVars(t *testing.T) {
	d, err := ParseDocument(decode(t, `{"b": ["{{ x.y }}", "{{ m.{{ k }} }}"], "a": {"{{ key }}": "{{ @ }}"}}`))
	if err != nil {
		t.Fatalf("ParseDocument() error = %v", err)
	}
	type row struct {
		Path, Source, Expr, Query string
		Nested                    bool
	}
	var got []row
	for _, v := range d.Vars() {
		got = append(got, row{v.Path, v.Source, v.Expr, v.Query.String(), v.Nested})
	}
	want := []row{
		{Path: "/a", Source: "{{ key }}", Expr: "key", Query: "key"},
		{Path: "/a/{{ key }}", Source: "{{ @ }}", Expr: "@", Query: "request.object"},
		{Path: "/b/0", Source: "{{ x.y }}", Expr: "x.y", Query: "x.y"},
		{Path: "/b/1", Source: "{{ k }}", Expr: "k", Query: "k"},
		{Path: "/b/1", Expr: "m.null", Query: "m.null", Nested: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Vars() mismatch (-want +got):\n%s", diff)
	}
	var queries []string
	for _, q := range d.Queries() {
		queries = append(queries, q.String())
	}
	if diff := cmp.Diff([]string{"key", "request.object", "x.y", "k", "m.null"}, queries); diff != "" {
		t.Errorf("Queries() mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkDocumentRender(b *testing.B) {
	var doc any
	if err := json.Unmarshal([]byte(`{
		"metadata": {"labels": {"owner": "{{ request.userInfo.username }}", "team": "platform"}},
		"spec": {
			"containers": [{"name": "c", "image": "{{ images.containers.c.registry }}/app:{{ request.object.metadata.labels.version }}"}],
			"replicas": "{{ request.object.spec.replicas }}",
			"static": {"a": [1, 2, 3], "b": "text"}
		},
		"message": "pod {{ request.object.metadata.name }} in {{ request.namespace }} has {{ request.object.spec.replicas }} replicas"
	}`), &doc); err != nil {
		b.Fatal(err)
	}
	d, err := ParseDocument(doc)
	if err != nil {
		b.Fatal(err)
	}
	vals := map[string]any{
		"request.userInfo.username":              "alice",
		"images.containers.c.registry":           "ghcr.io",
		"request.object.metadata.labels.version": "1.2",
		"request.object.spec.replicas":           float64(3),
		"request.object.metadata.name":           "web",
		"request.namespace":                      "prod",
	}
	env := Env{Resolve: func(q *jmespath.Query) (any, error) { return vals[q.String()], nil }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Render(env); err != nil {
			b.Fatal(err)
		}
	}
}
