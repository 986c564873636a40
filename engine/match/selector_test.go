package match

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// decode decodes a JSON test input into a policy type, as the policy
// decoder would.
func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestSelectorMatches(t *testing.T) {
	tests := []struct {
		name         string
		giveSelector string
		giveLabels   map[string]string
		want         bool
	}{
		{name: "empty selector matches everything", giveSelector: `{}`, giveLabels: nil, want: true},
		{name: "matchLabels equal", giveSelector: `{"matchLabels":{"app":"web"}}`, giveLabels: map[string]string{"app": "web", "x": "y"}, want: true},
		{name: "matchLabels other value", giveSelector: `{"matchLabels":{"app":"web"}}`, giveLabels: map[string]string{"app": "db"}, want: false},
		{name: "matchLabels absent", giveSelector: `{"matchLabels":{"app":"web"}}`, giveLabels: nil, want: false},
		{name: "matchLabels empty value needs the key", giveSelector: `{"matchLabels":{"app":""}}`, giveLabels: map[string]string{"app": ""}, want: true},
		{name: "matchLabels empty value absent key", giveSelector: `{"matchLabels":{"app":""}}`, giveLabels: nil, want: false},
		{name: "matchLabels all must hold", giveSelector: `{"matchLabels":{"a":"1","b":"2"}}`, giveLabels: map[string]string{"a": "1"}, want: false},
		{name: "wildcard value", giveSelector: `{"matchLabels":{"app":"web-*"}}`, giveLabels: map[string]string{"app": "web-1"}, want: true},
		{name: "wildcard value mismatch", giveSelector: `{"matchLabels":{"app":"web-*"}}`, giveLabels: map[string]string{"app": "db-1"}, want: false},
		{name: "wildcard key", giveSelector: `{"matchLabels":{"app.kubernetes.io/*":"web"}}`, giveLabels: map[string]string{"app.kubernetes.io/name": "web"}, want: true},
		{name: "wildcard key needs the value too", giveSelector: `{"matchLabels":{"app.kubernetes.io/*":"web"}}`, giveLabels: map[string]string{"app.kubernetes.io/name": "db", "other": "web"}, want: false},
		{name: "star star needs a label", giveSelector: `{"matchLabels":{"*":"*"}}`, giveLabels: nil, want: false},
		{name: "star star with a label", giveSelector: `{"matchLabels":{"*":"*"}}`, giveLabels: map[string]string{"a": ""}, want: true},
		{name: "question mark value", giveSelector: `{"matchLabels":{"tier":"?"}}`, giveLabels: map[string]string{"tier": "1"}, want: true},
		{name: "wildcard and plain together", giveSelector: `{"matchLabels":{"app":"web","env":"prod*"}}`, giveLabels: map[string]string{"app": "web", "env": "production"}, want: true},
		{name: "In", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"In","values":["db","cache"]}]}`, giveLabels: map[string]string{"tier": "db"}, want: true},
		{name: "In other value", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"In","values":["db"]}]}`, giveLabels: map[string]string{"tier": "web"}, want: false},
		{name: "In absent", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"In","values":["db"]}]}`, giveLabels: nil, want: false},
		{name: "wildcard in expression values makes the selector unbuildable", giveSelector: `{"matchLabels":{"a*":"*"},"matchExpressions":[{"key":"tier","operator":"In","values":["d*"]}]}`, giveLabels: map[string]string{"ab": "x", "tier": "db"}, want: false},
		{name: "NotIn other value", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]}`, giveLabels: map[string]string{"tier": "web"}, want: true},
		{name: "NotIn listed value", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]}`, giveLabels: map[string]string{"tier": "db"}, want: false},
		{name: "NotIn absent key matches", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]}`, giveLabels: nil, want: true},
		{name: "Exists", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"Exists"}]}`, giveLabels: map[string]string{"tier": ""}, want: true},
		{name: "Exists absent", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"Exists"}]}`, giveLabels: map[string]string{"other": "x"}, want: false},
		{name: "DoesNotExist", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]}`, giveLabels: map[string]string{"other": "x"}, want: true},
		{name: "DoesNotExist present", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]}`, giveLabels: map[string]string{"tier": "x"}, want: false},
		{name: "labels and expressions together", giveSelector: `{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"Exists"}]}`, giveLabels: map[string]string{"app": "web"}, want: false},
		{name: "unbuildable selector never matches", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}`, giveLabels: map[string]string{"tier": "2"}, want: false},
		{name: "unbuildable NotIn never matches", giveSelector: `{"matchExpressions":[{"key":"tier","operator":"NotIn"}]}`, giveLabels: nil, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := decode[kyverno.LabelSelector](t, tt.giveSelector)
			sel, _ := CompileSelector(&s, "sel")
			if got := sel.Matches(tt.giveLabels); got != tt.want {
				t.Errorf("CompileSelector(%s).Matches(%v) = %v, want %v", tt.giveSelector, tt.giveLabels, got, tt.want)
			}
		})
	}
}

func TestSelectorNil(t *testing.T) {
	sel, err := CompileSelector(nil, "sel")
	if err != nil {
		t.Fatalf("CompileSelector(nil) error = %v, want nil", err)
	}
	if sel.Matches(map[string]string{"a": "b"}) {
		t.Errorf("CompileSelector(nil).Matches = true, want false")
	}
	if sel.Err() != nil {
		t.Errorf("CompileSelector(nil).Err() = %v, want nil", sel.Err())
	}
}

type errorKey struct {
	Code engine.Code
	Path string
}

func errorKeys(err error) []errorKey {
	var out []errorKey
	for _, e := range engine.As(err) {
		out = append(out, errorKey{e.Code, e.Path})
	}
	return out
}

func TestCompileSelectorErrors(t *testing.T) {
	tests := []struct {
		name         string
		giveSelector string
		want         []errorKey
	}{
		{name: "bad operator", giveSelector: `{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].operator"}}},
		{name: "lower case operator", giveSelector: `{"matchExpressions":[{"key":"a","operator":"in","values":["1"]}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].operator"}}},
		{name: "In without values", giveSelector: `{"matchExpressions":[{"key":"a","operator":"In"}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].values"}}},
		{name: "Exists with values", giveSelector: `{"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].values"}}},
		{name: "bad expression key", giveSelector: `{"matchExpressions":[{"key":"a b","operator":"Exists"}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].key"}}},
		{name: "bad expression value", giveSelector: `{"matchExpressions":[{"key":"a","operator":"In","values":["ok","not ok"]}]}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchExpressions[0].values[1]"}}},
		{name: "bad label key", giveSelector: `{"matchLabels":{"-a":"x"}}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchLabels.-a"}}},
		{name: "bad label value", giveSelector: `{"matchLabels":{"a":"x y"}}`,
			want: []errorKey{{engine.CodeInvalidPolicy, "sel.matchLabels.a"}}},
		{name: "wildcard entries are not validated", giveSelector: `{"matchLabels":{"a b*":"x y*"}}`, want: nil},
		{name: "valid", giveSelector: `{"matchLabels":{"example.com/a":"x"},"matchExpressions":[{"key":"b","operator":"NotIn","values":["1"]}]}`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := decode[kyverno.LabelSelector](t, tt.giveSelector)
			sel, err := CompileSelector(&s, "sel")
			if diff := cmp.Diff(tt.want, errorKeys(err)); diff != "" {
				t.Errorf("CompileSelector(%s) errors mismatch (-want +got):\n%s", tt.giveSelector, diff)
			}
			if sel == nil {
				t.Fatalf("CompileSelector(%s) = nil selector, want a usable one", tt.giveSelector)
			}
			if (sel.Err() != nil) != (err != nil) {
				t.Errorf("CompileSelector(%s).Err() = %v, want an error exactly when CompileSelector fails (%v)", tt.giveSelector, sel.Err(), err)
			}
		})
	}
}
