package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/policy"
)

// hostileRules places EXPR in every kind of field a policy parses as
// JMESPath, with the path compile errors must name.
var hostileRules = []struct {
	name     string
	rule     string // one rule, EXPR standing for the expression
	wantPath string
}{
	{
		name:     "validate.message",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {message: "{{ EXPR }}", deny: {}}}`,
		wantPath: "spec.rules[0].validate.message",
	},
	{
		name:     "validate.pattern",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {pattern: {metadata: {name: "{{ EXPR }}"}}}}`,
		wantPath: "spec.rules[0].validate.pattern.metadata.name",
	},
	{
		name:     "deny condition",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {deny: {conditions: {any: [{key: "{{ EXPR }}", operator: Equals, value: x}]}}}}`,
		wantPath: "spec.rules[0].validate.deny.conditions.any[0].key",
	},
	{
		name:     "preconditions",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, preconditions: {all: [{key: x, operator: Equals, value: "{{ EXPR }}"}]}, validate: {deny: {}}}`,
		wantPath: "spec.rules[0].preconditions.all[0].value",
	},
	{
		name:     "nested variable",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {message: "{{ a.{{ EXPR }} }}", deny: {}}}`,
		wantPath: "spec.rules[0].validate.message",
	},
	{
		name:     "context variable jmesPath",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, context: [{name: v, variable: {jmesPath: "EXPR"}}], validate: {deny: {}}}`,
		wantPath: "spec.rules[0].context[0].variable.jmesPath",
	},
	{
		name:     "context apiCall jmesPath",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, context: [{name: v, apiCall: {urlPath: /api/v1/namespaces, jmesPath: "EXPR"}}], validate: {deny: {}}}`,
		wantPath: "spec.rules[0].context[0].apiCall.jmesPath",
	},
	{
		name:     "validate foreach list",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {foreach: [{list: "EXPR", deny: {}}]}}`,
		wantPath: "spec.rules[0].validate.foreach[0].list",
	},
	{
		name:     "nested foreach list",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {foreach: [{list: a, foreach: [{list: "EXPR", deny: {}}]}]}}`,
		wantPath: "spec.rules[0].validate.foreach[0].foreach[0].list",
	},
	{
		name:     "mutate foreach list",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, mutate: {foreach: [{list: "EXPR", patchStrategicMerge: {metadata: {labels: {a: b}}}}]}}`,
		wantPath: "spec.rules[0].mutate.foreach[0].list",
	},
	{
		name:     "mutate patch",
		rule:     `{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, mutate: {patchStrategicMerge: {metadata: {labels: {a: "{{ EXPR }}"}}}}}`,
		wantPath: "spec.rules[0].mutate.patchStrategicMerge.metadata.labels.a",
	},
	{
		name:     "image extractor",
		rule:     `{name: r, match: {any: [{resources: {kinds: [Pod]}}]}, imageExtractors: {Pod: [{path: /spec/x, jmesPath: "EXPR"}]}, verifyImages: [{imageReferences: ["*"], attestors: [{entries: [{keys: {publicKeys: k}}]}]}]}`,
		wantPath: "spec.rules[0].imageExtractors.Pod[0].jmesPath",
	},
}

// hostileExpressions are the shapes of issue 17 (a million nested
// parentheses: 2 MB) and the same within MaxExpressionBytes.
var hostileExpressions = []struct {
	name      string
	expr      string
	wantLimit string
}{
	{name: "a million parentheses", expr: strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000), wantLimit: "MaxExpressionBytes"},
	{name: "nested parentheses", expr: strings.Repeat("(", 30000) + "a" + strings.Repeat(")", 30000), wantLimit: "MaxExpressionNesting"},
	{name: "nots", expr: strings.Repeat("!", 60000) + "a", wantLimit: "MaxExpressionNesting"},
	{name: "long path", expr: "a" + strings.Repeat(".a", 30000), wantLimit: "MaxExpressionDepth"},
}

func hostilePolicy(rule, expr string) string {
	return "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  background: false\n  rules:\n  - " +
		strings.Replace(rule, "EXPR", expr, 1) + "\n"
}

// TestCompileHostileExpressions compiles every placement with every shape:
// each is an error with Code engine.CodeInvalidVariable and the field's
// path, wrapping the *jmespath.LimitError, whose message stays short.
func TestCompileHostileExpressions(t *testing.T) {
	for i, rule := range hostileRules {
		for j, ex := range hostileExpressions {
			if j == 0 && i > 0 {
				continue // 2 MB of YAML: one placement is enough
			}
			t.Run(rule.name+"/"+ex.name, func(t *testing.T) {
				_, err := policy.Compile(decode(t, hostilePolicy(rule.rule, ex.expr)))
				es := engine.As(err)
				if len(es) == 0 {
					t.Fatalf("Compile(%s with %s) = %v, want an *engine.Error", rule.name, ex.name, err)
				}
				e := es[0]
				if e.Code != engine.CodeInvalidVariable || e.Path != rule.wantPath {
					t.Errorf("Compile(%s with %s) error = {Code: %q, Path: %q}, want {Code: %q, Path: %q}", rule.name, ex.name, e.Code, e.Path, engine.CodeInvalidVariable, rule.wantPath)
				}
				var le *jmespath.LimitError
				if !errors.As(e, &le) || le.Limit != ex.wantLimit {
					t.Errorf("Compile(%s with %s) error = %.300s, want a *jmespath.LimitError of %s", rule.name, ex.name, e, ex.wantLimit)
				}
				if n := len(e.Message); n > 1024 {
					t.Errorf("Compile(%s with %s) error message of %d bytes (%.200s...), want at most 1024", rule.name, ex.name, n, e.Message)
				}
			})
		}
	}
}

// cel-go has limits of its own (100,000 code points, a nesting of 250): a
// hostile validate.cel expression compiles into a rule whose evaluation
// reports the compilation error naming the limit (a fail, as Kubernetes
// reports a validation that does not compile). A chain of ! is parsed
// without recursion and evaluates.
func TestCELHostileExpressions(t *testing.T) {
	tests := []struct {
		name        string
		giveExpr    string
		wantStatus  eval.Status
		wantMessage string
	}{
		{name: "a hundred thousand parentheses", giveExpr: strings.Repeat("(", 100_000) + "true" + strings.Repeat(")", 100_000),
			wantStatus: eval.StatusFail, wantMessage: "expression code point size exceeds limit: size: 200004, limit 100000"},
		{name: "nested parentheses within the size", giveExpr: strings.Repeat("(", 40_000) + "true" + strings.Repeat(")", 40_000),
			wantStatus: eval.StatusFail, wantMessage: "expression recursion limit exceeded: 250"},
		{name: "nested lists", giveExpr: "size(" + strings.Repeat("[", 40_000) + strings.Repeat("]", 40_000) + ") == 1",
			wantStatus: eval.StatusFail, wantMessage: "expression recursion limit exceeded: 250"},
		{name: "nots", giveExpr: strings.Repeat("!", 90_000) + "true", wantStatus: eval.StatusPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n" +
				"  - {name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {cel: {expressions: [{expression: \"" + tt.giveExpr + "\"}]}}}\n"
			p, err := policy.Compile(decode(t, y))
			if err != nil {
				t.Fatalf("Compile(cel %s) = %.300v, want the policy", tt.name, err)
			}
			resp := eval.New(eval.Options{}).Evaluate(t.Context(), []*policy.Policy{p}, &eval.Request{
				Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}},
			})
			if len(resp.Results) != 1 {
				t.Fatalf("Evaluate(cel %s) = %d results, want 1", tt.name, len(resp.Results))
			}
			r := resp.Results[0]
			if r.Status != tt.wantStatus || !strings.Contains(r.Message, tt.wantMessage) {
				t.Errorf("Evaluate(cel %s) = %s %.300q, want %s with %q", tt.name, r.Status, r.Message, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}
