package policy

import (
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
)

func decodeException(t *testing.T, src string) *kyverno.PolicyException {
	t.Helper()
	docs, err := kyverno.DecodeExceptions("test", []byte(src))
	if err != nil || len(docs) != 1 {
		t.Fatalf("DecodeExceptions() = %d, %v", len(docs), err)
	}
	return docs[0]
}

func TestCompileExceptionErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{
			name:     "policy name required",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}}]}\n",
			wantCode: engine.CodeInvalidPolicy, wantPath: "spec.exceptions[0].policyName",
		},
		{
			name:     "user info in a background exception",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}, clusterRoles: [admin]}]}\n",
			wantCode: engine.CodeBackgroundUserInfo, wantPath: "spec.match.any[0]",
		},
		{
			name:     "container control without images",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}}]}\n  podSecurity: [{controlName: Capabilities}]\n",
			wantCode: engine.CodeInvalidPolicy, wantPath: "spec.podSecurity[0].controlName",
		},
		{
			name:     "bad condition operator",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod]}}]}\n  conditions: {all: [{key: a, operator: Like, value: b}]}\n",
			wantCode: engine.CodeInvalidPolicy, wantPath: "spec.conditions.all[0].operator",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileException(decodeException(t, tt.give))
			es := engine.As(err)
			if len(es) == 0 {
				t.Fatalf("CompileException() error = %v, want engine errors", err)
			}
			if es[0].Code != tt.wantCode || es[0].Path != tt.wantPath {
				t.Errorf("CompileException() error = %s at %q, want %s at %q", es[0].Code, es[0].Path, tt.wantCode, tt.wantPath)
			}
		})
	}
}

func TestException(t *testing.T) {
	ex, err := CompileException(decodeException(t, `apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: ex, namespace: kyverno}
spec:
  exceptions:
  - {policyName: cpol, ruleNames: ["check-*"]}
  - {policyName: team/pol, ruleNames: [r]}
  match:
    any:
    - resources:
        kinds: [Pod, Namespace]
        operations: [DELETE]
        namespaceSelector: {matchLabels: {exempt: "yes"}}
`))
	if err != nil {
		t.Fatalf("CompileException() error = %v", err)
	}
	if got := ex.Key(); got != "kyverno/ex" {
		t.Errorf("Key() = %q, want kyverno/ex", got)
	}
	cpol := compileDoc(t, "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: cpol}\nspec:\n  rules:\n  - name: check-a\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {deny: {}}\n")
	pol := compileDoc(t, "apiVersion: kyverno.io/v1\nkind: Policy\nmetadata: {name: pol, namespace: team}\nspec:\n  rules:\n  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {deny: {}}\n")
	covers := []struct {
		pol  *Policy
		rule string
		want bool
	}{
		{cpol, "check-a", true},
		{cpol, "autogen-check-a", false},
		{pol, "r", true},
		{pol, "s", false},
	}
	for _, tt := range covers {
		if got := ex.Covers(tt.pol, tt.rule); got != tt.want {
			t.Errorf("Covers(%s, %s) = %v, want %v", tt.pol.Name(), tt.rule, got, tt.want)
		}
	}
	matches := []struct {
		name string
		give match.Resource
		want bool
	}{
		{"operations are not checked", match.Resource{Version: "v1", Kind: "Pod", Operation: "CREATE", NamespaceLabels: map[string]string{"exempt": "yes"}}, true},
		{"namespace selector", match.Resource{Version: "v1", Kind: "Pod", Operation: "CREATE"}, false},
		{"no namespace selector for namespaces", match.Resource{Version: "v1", Kind: "Namespace", Name: "dev", Operation: "CREATE"}, true},
	}
	for _, tt := range matches {
		if got := ex.Matches(&tt.give); got != tt.want {
			t.Errorf("Matches(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func compileDoc(t *testing.T, src string) *Policy {
	t.Helper()
	docs, err := kyverno.DecodePolicies("test", []byte(src))
	if err != nil {
		t.Fatalf("DecodePolicies() error = %v", err)
	}
	p, err := Compile(docs[0])
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	return p
}
