package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

func TestCompile(t *testing.T) {
	tests := []struct {
		name      string
		giveBlock string
	}{
		{name: "any", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["a*"],"namespaces":["b"],"operations":["CREATE","UPDATE","DELETE","CONNECT"]}}]}`},
		{name: "all", giveBlock: `{"all":[{"resources":{"kinds":["Pod"]},"subjects":[{"kind":"ServiceAccount","name":"sa","namespace":"ns"}],"roles":["ns:r"],"clusterRoles":["c"]}]}`},
		{name: "legacy", giveBlock: `{"resources":{"kinds":["Pod"],"name":"x"},"subjects":[{"kind":"Group","name":"g"}]}`},
		{name: "any with empty resources", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"resources":{}}`},
		{name: "empty block", giveBlock: `{}`},
		{name: "wildcard selector is not validated", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"a":"*"},"matchExpressions":[{"key":"b","operator":"Gt","values":["1"]}]}}}]}`},
		{name: "namespaceSelector is not validated", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"key":"b","operator":"Gt","values":["1"]}]}}}]}`},
		{name: "empty namespaceSelector", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{}}}]}`},
		{name: "escaped braces are still variables only with both pairs", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"names":["{x}"]}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Compile(decode[kyverno.MatchResources](t, tt.giveBlock), "match")
			if err != nil {
				t.Errorf("Compile(%s) error = %v, want nil", tt.giveBlock, err)
			}
			if m == nil {
				t.Errorf("Compile(%s) = nil, want a Matcher", tt.giveBlock)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	const inv = engine.CodeInvalidPolicy
	tests := []struct {
		name      string
		giveBlock string
		want      []errorKey
	}{
		{name: "any and all", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"all":[{"resources":{"kinds":["Pod"]}}]}`,
			want: []errorKey{{inv, "match"}}},
		{name: "any and resources", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"resources":{"kinds":["Pod"]}}`,
			want: []errorKey{{inv, "match.resources"}}},
		{name: "all and resources", giveBlock: `{"all":[{"resources":{"kinds":["Pod"]}}],"resources":{"names":[]}}`,
			want: []errorKey{{inv, "match.resources"}}},
		{name: "name and names", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"name":"a","names":["b"]}}]}`,
			want: []errorKey{{inv, "match.any[0].resources"}}},
		{name: "star with other kinds", giveBlock: `{"any":[{"resources":{"kinds":["*","Pod"]}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.kinds"}}},
		{name: "star with other kinds in legacy form", giveBlock: `{"resources":{"kinds":["Pod","*"]}}`,
			want: []errorKey{{inv, "match.resources.kinds"}}},
		{name: "lower-case operation", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"operations":["CREATE","create"]}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.operations[1]"}}},
		{name: "subject without kind", giveBlock: `{"any":[{"subjects":[{"name":"a"}]}]}`,
			want: []errorKey{{inv, "match.any[0].subjects[0].kind"}}},
		{name: "subject of unknown kind", giveBlock: `{"any":[{"subjects":[{"kind":"Role","name":"a"}]}]}`,
			want: []errorKey{{inv, "match.any[0].subjects[0].kind"}}},
		{name: "subject without name", giveBlock: `{"all":[{"subjects":[{"kind":"User"}]}]}`,
			want: []errorKey{{inv, "match.all[0].subjects[0].name"}}},
		{name: "service account without namespace", giveBlock: `{"any":[{"subjects":[{"kind":"ServiceAccount","name":"sa"}]}]}`,
			want: []errorKey{{inv, "match.any[0].subjects[0].namespace"}}},
		{name: "role without namespace", giveBlock: `{"any":[{"roles":["admin"]}]}`,
			want: []errorKey{{inv, "match.any[0].roles[0]"}}},
		{name: "role with two colons", giveBlock: `{"roles":["ns:a:b"]}`,
			want: []errorKey{{inv, "match.roles[0]"}}},
		{name: "legacy user info is validated next to any", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"subjects":[{"kind":"User"}]}`,
			want: []errorKey{{inv, "match.subjects[0].name"}}},
		{name: "all is validated next to any", giveBlock: `{"any":[{"resources":{"kinds":["Pod"]}}],"all":[{"resources":{"operations":["GET"]}}]}`,
			want: []errorKey{{inv, "match"}, {inv, "match.all[0].resources.operations[0]"}}},
		{name: "empty selector", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.selector"}}},
		{name: "empty matchLabels", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{}}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.selector"}}},
		{name: "selector operator", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.selector.matchExpressions[0].operator"}}},
		{name: "selector label value", giveBlock: `{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"a b"}}}}`,
			want: []errorKey{{inv, "match.resources.selector.matchLabels.app"}}},
		{name: "selector without key", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchExpressions":[{"operator":"Exists"}]}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.selector.matchExpressions[0].key"}}},
		{name: "wildcard selector without operator", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"a":"*"},"matchExpressions":[{"key":"b"}]}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.selector.matchExpressions[0].operator"}}},
		{name: "namespaceSelector without key", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"operator":"Exists"}]}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.namespaceSelector.matchExpressions[0].key"}}},
		{name: "variable in kinds", giveBlock: `{"any":[{"resources":{"kinds":["{{request.object.kind}}"]}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.kinds[0]"}}},
		{name: "variable in name", giveBlock: `{"resources":{"kinds":["Pod"],"name":"{{ x }}"}}`,
			want: []errorKey{{inv, "match.resources.name"}}},
		{name: "variable in annotation key", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"annotations":{"{{a}}":"b"}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.annotations.{{a}}"}}},
		{name: "variable in namespaceSelector value", giveBlock: `{"any":[{"resources":{"kinds":["Pod"],"namespaceSelector":{"matchExpressions":[{"key":"a","operator":"In","values":["{{b}}"]}]}}}]}`,
			want: []errorKey{{inv, "match.any[0].resources.namespaceSelector.matchExpressions[0]"}}},
		{name: "variable in subject", giveBlock: `{"any":[{"subjects":[{"kind":"User","name":"{{request.userInfo.username}}"}]}]}`,
			want: []errorKey{{inv, "match.any[0].subjects[0]"}}},
		{name: "variable in cluster role", giveBlock: `{"clusterRoles":["{{x}}"]}`,
			want: []errorKey{{inv, "match.clusterRoles[0]"}}},
		{name: "every problem is reported", giveBlock: `{"any":[{"resources":{"kinds":["*","Pod"],"operations":["get"]}},{"roles":["r"]}]}`,
			want: []errorKey{{inv, "match.any[0].resources.kinds"}, {inv, "match.any[0].resources.operations[0]"}, {inv, "match.any[1].roles[0]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(decode[kyverno.MatchResources](t, tt.giveBlock), "match")
			if diff := cmp.Diff(tt.want, errorKeys(err)); diff != "" {
				t.Errorf("Compile(%s) errors mismatch (-want +got):\n%s", tt.giveBlock, diff)
			}
		})
	}
}

func TestCompileRule(t *testing.T) {
	tests := []struct {
		name     string
		giveRule string
		giveOpts RuleOptions
	}{
		{name: "match only", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`},
		{name: "exclude filters need no kinds", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"any":[{"resources":{"namespaces":["kube-system"]}},{"clusterRoles":["cluster-admin"]}]}}`},
		{name: "legacy match and exclude", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{"resources":{"namespaces":["kube-system"]}}}`},
		{name: "star kind without background", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["*"]}}]}}`},
		{name: "namespaces in a cluster policy", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"],"namespaces":["a"]}}]}}`, giveOpts: RuleOptions{Background: true}},
		{name: "namespaced policy without namespaces", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]}}`, giveOpts: RuleOptions{PolicyNamespace: "team"}},
		{name: "exclude any differs from match any", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"any":[{"resources":{"kinds":["Pod"],"namespaces":["a"]}}]}}`},
		{name: "exclude all never conflicts", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"all":[{"resources":{"kinds":["Pod"]}}]}}`},
		{name: "legacy exclude with fewer namespaces", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"namespaces":["a","b"]}},"exclude":{"resources":{"kinds":["Pod"],"namespaces":["a"]}}}`},
		{name: "legacy exclude names do not cover match names", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"names":["db"]}},"exclude":{"resources":{"names":["web-*"]}}}`},
		{name: "legacy exclude selector with other labels", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"a"}}}},"exclude":{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"b"}}}}}`},
		{name: "legacy exclude by user", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{"clusterRoles":["cluster-admin"]}}`},
		{name: "empty legacy exclude", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{}}`},
		{name: "legacy exclude with other annotations", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"annotations":{"a":"1"}}},"exclude":{"resources":{"kinds":["Pod"],"annotations":{"a":"2"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := decode[kyverno.Rule](t, tt.giveRule)
			r, err := CompileRule(&raw, "spec.rules[0]", tt.giveOpts)
			if err != nil {
				t.Errorf("CompileRule(%s) error = %v, want nil", tt.giveRule, err)
			}
			if r == nil || r.Match() == nil || (raw.Exclude != nil) != (r.Exclude() != nil) {
				t.Errorf("CompileRule(%s) = %+v, want match and exclude compiled", tt.giveRule, r)
			}
		})
	}
}

func TestCompileRuleErrors(t *testing.T) {
	const inv = engine.CodeInvalidPolicy
	tests := []struct {
		name     string
		giveRule string
		giveOpts RuleOptions
		want     []errorKey
	}{
		{name: "match filter without resources", giveRule: `{"name":"r","match":{"any":[{"subjects":[{"kind":"User","name":"dave"}]}]}}`,
			want: []errorKey{{inv, "spec.rules[0].match.any[0].resources"}}},
		{name: "match filter with empty resources", giveRule: `{"name":"r","match":{"all":[{"resources":{"kinds":["Pod"]}},{"resources":{}}]}}`,
			want: []errorKey{{inv, "spec.rules[0].match.all[1].resources"}}},
		{name: "match filter without kinds", giveRule: `{"name":"r","match":{"any":[{"resources":{"names":["a"]}}]}}`,
			want: []errorKey{{inv, "spec.rules[0].match.any[0].resources.kinds"}}},
		{name: "empty legacy match", giveRule: `{"name":"r","match":{}}`,
			want: []errorKey{{inv, "spec.rules[0].match.resources"}}},
		{name: "legacy match without kinds", giveRule: `{"name":"r","match":{"resources":{"namespaces":["a"]}}}`,
			want: []errorKey{{inv, "spec.rules[0].match.resources.kinds"}}},
		{name: "star kind in a background policy", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["*"]}}]}}`, giveOpts: RuleOptions{Background: true},
			want: []errorKey{{inv, "spec.rules[0].match.any[0].resources.kinds"}}},
		{name: "star kind in exclude of a background policy", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"resources":{"kinds":["*"],"namespaces":["a"]}}}`, giveOpts: RuleOptions{Background: true},
			want: []errorKey{{inv, "spec.rules[0].exclude.resources.kinds"}}},
		{name: "namespaces in a namespaced policy", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"],"namespaces":["a"]}}]},"exclude":{"all":[{"resources":{"namespaces":["b"]}}]}}`, giveOpts: RuleOptions{PolicyNamespace: "team"},
			want: []errorKey{{inv, "spec.rules[0].exclude.all[0].resources.namespaces"}, {inv, "spec.rules[0].match.any[0].resources.namespaces"}}},
		{name: "exclude any repeats match any", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"exclude":{"any":[{"resources":{"namespaces":["x"]}},{"resources":{"kinds":["Pod"]}}]}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "legacy match next to exclude any", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"]}},"exclude":{"any":[{"resources":{"namespaces":["kube-system"]}}]}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "legacy exclude repeats legacy match", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"namespaces":["a"]}},"exclude":{"resources":{"kinds":["Pod","Service"],"namespaces":["a","b"]}}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "legacy exclude names cover a match name", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"names":["db","web-1"]}},"exclude":{"resources":{"names":["web-*"]}}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "legacy exclude with the same selector", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"app":"a"},"matchExpressions":[{"key":"b","operator":"Exists"}]}}},"exclude":{"resources":{"selector":{"matchLabels":{"app":"a"},"matchExpressions":[{"key":"b","operator":"Exists"}]}}}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "legacy exclude of all match roles", giveRule: `{"name":"r","match":{"resources":{"kinds":["Pod"]},"clusterRoles":["a"]},"exclude":{"clusterRoles":["a","b"]}}`,
			want: []errorKey{{inv, "spec.rules[0]"}}},
		{name: "block errors are kept", giveRule: `{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"],"operations":["x"]}}]},"exclude":{"any":[{"roles":["x"]}]}}`,
			want: []errorKey{{inv, "spec.rules[0].exclude.any[0].roles[0]"}, {inv, "spec.rules[0].match.any[0].resources.operations[0]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := decode[kyverno.Rule](t, tt.giveRule)
			r, err := CompileRule(&raw, "spec.rules[0]", tt.giveOpts)
			if diff := cmp.Diff(tt.want, errorKeys(err)); diff != "" {
				t.Errorf("CompileRule(%s) errors mismatch (-want +got):\n%s", tt.giveRule, diff)
			}
			if r != nil {
				t.Errorf("CompileRule(%s) = %+v, want nil with an error", tt.giveRule, r)
			}
		})
	}
}
