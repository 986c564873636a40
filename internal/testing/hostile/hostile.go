package hostile

import "strings"

// Expression is a JMESPath expression the engine's parser guard refuses,
// and the name of the limit it exceeds (a constant of engine/jmespath).
type Expression struct {
	Name  string
	Expr  string
	Limit string
}

// Expressions are the shapes of the parser guard: a million nested
// parentheses (2 MB, the finding), deep brackets, a chain of nots and a
// long left-deep chain.
func Expressions() []Expression {
	return []Expression{
		{Name: "a million parentheses", Expr: strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000), Limit: "MaxExpressionBytes"},
		{Name: "nested brackets", Expr: strings.Repeat("[", 30000) + "a" + strings.Repeat("]", 30000), Limit: "MaxExpressionNesting"},
		{Name: "nots", Expr: strings.Repeat("!", 60000) + "a", Limit: "MaxExpressionNesting"},
		{Name: "long chain", Expr: "a" + strings.Repeat(".a", 30000), Limit: "MaxExpressionDepth"},
	}
}

// MessagePolicy is a ClusterPolicy named name whose one rule (on Pods,
// autogen off) has the validate.message {{ expr }}.
func MessagePolicy(name, expr string) string {
	return podPolicy(name, `
      message: "{{ `+expr+` }}"
      pattern: {metadata: {name: "?*"}}
`)
}

// AmplifyPolicy is the ClusterPolicy "amplify": it denies Pods with a
// condition that nests replace_all nine times, each making the Pod's name
// 72 times longer (688 bytes of policy; 72^9 times a 40-character name is
// 10^18 bytes).
func AmplifyPolicy() string {
	expr := "request.object.metadata.name"
	for range 9 {
		expr = "replace_all(" + expr + ", 'a', '" + strings.Repeat("a", 72) + "')"
	}
	return podPolicy("amplify", `
      message: m
      deny:
        conditions:
          any:
          - key: "{{ `+expr+` }}"
            operator: Equals
            value: x
`)
}

// podPolicy is a ClusterPolicy named name whose one rule, r, validates
// Pods (autogen off) with validate, the lines of its validate object.
func podPolicy(name, validate string) string {
	return `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: ` + name + `
  annotations: {pod-policies.kyverno.io/autogen-controllers: none}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:` + validate
}
