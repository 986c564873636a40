package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

func TestRuleExplain(t *testing.T) {
	tests := []struct {
		name          string
		giveRule      string // {"name":..., "match":..., "exclude":...}
		giveNamespace string // policy namespace
		giveResource  Resource
		wantReasons   []string // nil: the rule applies
	}{
		{
			name:         "applies",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`,
			giveResource: podReq(),
		},
		{
			name:         "kind",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Deployment","StatefulSet"]}}}`,
			giveResource: podReq(),
			wantReasons:  []string{"kind does not match [Deployment StatefulSet]"},
		},
		{
			name:         "every failed condition of a filter, in Kyverno's order",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Deployment"],"name":"x","names":["y"],"namespaces":["prod"],"annotations":{"a":"b"},"selector":{"matchLabels":{"app":"db"}},"namespaceSelector":{"matchLabels":{"env":"dev"}}},"roles":["a:b"],"clusterRoles":["admin"],"subjects":[{"kind":"User","name":"bob"}]}}`,
			giveResource: podReq(),
			wantReasons: []string{
				"kind does not match [Deployment]",
				"name does not match",
				"none of the names match",
				"namespace does not match",
				"annotations does not match",
				"selector does not match",
				"namespace selector does not match labels",
				"user info does not match roles for the given conditionBlock",
				"user info does not match clustersRoles for the given conditionBlock",
				"user info does not match subject for the given conditionBlock",
			},
		},
		{
			name:         "operation mismatch hides the other reasons",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Deployment"],"operations":["DELETE"]}}}`,
			giveResource: podReq(),
			wantReasons:  []string{"operation does not match"},
		},
		{
			name:         "any gives one reason",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Deployment"]}},{"resources":{"kinds":["Service"]}}]}}`,
			giveResource: podReq(),
			wantReasons:  []string{"no resource matched"},
		},
		{
			name:         "all gives the reasons of every filter",
			giveRule:     `{"name":"r","match":{"all":[{"resources":{"kinds":["Deployment"]}},{"resources":{"kinds":["Pod"]}},{"resources":{"namespaces":["prod"]}}]}}`,
			giveResource: podReq(),
			wantReasons:  []string{"kind does not match [Deployment]", "namespace does not match"},
		},
		{
			name:         "empty filter",
			giveRule:     `{"name":"r","match":{"all":[{"resources":{"kinds":["Pod"]}},{"subjects":[{"kind":"User","name":"alice"}]}]}}`,
			giveResource: with(podReq(), func(r *Resource) { r.Background = true }),
			wantReasons:  []string{"match cannot be empty"},
		},
		{
			name:         "exclude namespace selector never excludes a Namespace",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Namespace"]}}]},"exclude":{"any":[{"resources":{"namespaceSelector":{"matchLabels":{"env":"prod"}}}}]}}`,
			giveResource: nsReq(),
		},
		{
			name:         "namespace selector on a Namespace in match",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Namespace"],"namespaceSelector":{"matchLabels":{"env":"prod"}}}}}`,
			giveResource: nsReq(),
			wantReasons:  []string{"namespace selector is not applicable for namespace resource"},
		},
		{
			name:         "selector that cannot be built",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"*"},"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}}}}`,
			giveResource: podReq(),
			wantReasons:  []string{`failed to parse selector: "Gt" is not a valid label selector operator (want In, NotIn, Exists or DoesNotExist)`},
		},
		{
			name:         "namespace selector that cannot be built",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"key":"env","operator":"In"}]}}}}`,
			giveResource: podReq(),
			wantReasons:  []string{`failed to parse namespace selector: for 'In', 'NotIn' operators, values set can't be empty`},
		},
		{
			name:         "excluded by any",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"any":[{"resources":{"namespaces":["default"]}},{"resources":{"namespaces":["prod"]}},{"clusterRoles":["view"]}]}}`,
			giveResource: podReq(),
			wantReasons: []string{
				"resource excluded since one of the criteria excluded it",
				"resource excluded since one of the criteria excluded it",
			},
		},
		{
			name:         "not excluded by any",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"any":[{"resources":{"namespaces":["prod"]}}]}}`,
			giveResource: podReq(),
		},
		{
			name:         "excluded by all",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"all":[{"resources":{"namespaces":["default"]}},{"clusterRoles":["view"]}]}}`,
			giveResource: podReq(),
			wantReasons:  []string{"resource excluded since the combination of all criteria exclude it"},
		},
		{
			name:         "not excluded by all",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"all":[{"resources":{"namespaces":["default"]}},{"clusterRoles":["admin"]}]}}`,
			giveResource: podReq(),
		},
		{
			name:         "excluded by the legacy form",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{"clusterRoles":["view"]}}`,
			giveResource: podReq(),
			wantReasons:  []string{"resource excluded since one of the criteria excluded it"},
		},
		{
			name:         "empty legacy exclude excludes nothing",
			giveRule:     `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{}}`,
			giveResource: podReq(),
		},
		{
			name:         "exclude is not checked when match fails",
			giveRule:     `{"name":"r","match":{"any":[{"resources":{"kinds":["Service"]}}]},"exclude":{"any":[{"resources":{"kinds":["Pod"]}}]}}`,
			giveResource: podReq(),
			wantReasons:  []string{"no resource matched"},
		},
		{
			name:          "policy namespace",
			giveRule:      `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`,
			giveNamespace: "default",
			giveResource:  podReq(),
		},
		{
			name:          "other policy namespace",
			giveRule:      `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`,
			giveNamespace: "prod",
			giveResource:  podReq(),
			wantReasons:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := decode[kyverno.Rule](t, tt.giveRule)
			match, _ := Compile(raw.Match, "match")
			var exclude *Matcher
			if raw.Exclude != nil {
				exclude, _ = Compile(*raw.Exclude, "exclude")
			}
			r := NewRule(raw.Name, match, exclude, tt.giveNamespace)
			res := tt.giveResource
			mm := r.Explain(&res)
			if got, want := r.Applies(&res), tt.wantReasons == nil; got != want {
				t.Errorf("Applies(%s) = %v, want %v", tt.giveRule, got, want)
			}
			if (mm == nil) != (tt.wantReasons == nil) {
				t.Fatalf("Explain(%s) = %+v, want reasons %q", tt.giveRule, mm, tt.wantReasons)
			}
			if mm == nil {
				return
			}
			if diff := cmp.Diff(tt.wantReasons, mm.Reasons, cmpEmptyIsNil); diff != "" {
				t.Errorf("Explain(%s) reasons mismatch (-want +got):\n%s", tt.giveRule, diff)
			}
		})
	}
}

// cmpEmptyIsNil lets an empty want match a nil got.
var cmpEmptyIsNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestMismatchMessage(t *testing.T) {
	tests := []struct {
		name          string
		giveRule      string
		giveNamespace string
		want          string
	}{
		{
			name:     "reasons are numbered",
			giveRule: `{"name":"check-labels","match":{"all":[{"resources":{"kinds":["Deployment"]}},{"resources":{"kinds":["Pod"],"namespaces":["prod"]}}]}}`,
			want:     "rule check-labels not matched:\n 1. kind does not match [Deployment]\n 2. namespace does not match",
		},
		{
			name:          "policy namespace",
			giveRule:      `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`,
			giveNamespace: "prod",
			want:          "policy and resource namespaces mismatch",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := decode[kyverno.Rule](t, tt.giveRule)
			r, err := CompileRule(&raw, "spec.rules[0]", RuleOptions{PolicyNamespace: tt.giveNamespace})
			if err != nil {
				t.Fatalf("CompileRule(%s): %v", tt.giveRule, err)
			}
			res := podReq()
			mm := r.Explain(&res)
			if mm == nil {
				t.Fatalf("Explain(%s) = nil, want %q", tt.giveRule, tt.want)
			}
			if got := mm.String(); got != tt.want {
				t.Errorf("Explain(%s).String() = %q, want %q", tt.giveRule, got, tt.want)
			}
		})
	}
}

func TestRuleNil(t *testing.T) {
	var r *Rule
	res := podReq()
	if r.Applies(&res) || r.Explain(&res) == nil {
		t.Errorf("(*Rule)(nil): Applies = true or Explain = nil, want false and a mismatch")
	}
	raw := decode[kyverno.Rule](t, `{"name":"r","match":{"any":[{"resources":{"kinds":["*"]}}]}}`)
	r, err := CompileRule(&raw, "spec.rules[0]", RuleOptions{})
	if err != nil {
		t.Fatalf("CompileRule: %v", err)
	}
	if r.Applies(nil) || r.Explain(nil) == nil {
		t.Errorf("Applies(nil) = true or Explain(nil) = nil, want false and a mismatch")
	}
}
