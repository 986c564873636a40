package kyvernotest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// checkFixture is a test run with fixed engine responses: no engine runs.
func checkFixture(strict bool) *suiteRun {
	requireLabels := &Policy{Name: "require-labels", Kind: "ClusterPolicy", responds: true}
	addLabels := &Policy{Name: "add-labels", Kind: "ClusterPolicy", responds: true,
		unsupportedRules: map[string]string{"add": "mutate rules are not supported yet"}}
	pols := []*Policy{
		requireLabels,
		addLabels,
		{Name: "broken", Kind: "ClusterPolicy", Err: engine.Errorf(engine.CodeInvalidPolicy, "spec.rules[0].match", "match is required")},
		{Name: "undecodable", Kind: "ClusterPolicy", Err: engine.Errorf(engine.CodeDecode, "spec", "unknown field")},
		{Name: "vpol", Kind: "ValidatingPolicy", Unsupported: "ValidatingPolicy policies are not supported yet"},
	}
	obj := func(apiVersion, kind, ns, name string) *Resource {
		return newResource("r.yaml", 1, map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}})
	}
	rr := func(policy, rule string, typ eval.RuleType, status eval.Status) eval.RuleResult {
		return eval.RuleResult{Policy: policy, Rule: rule, Type: typ, Status: status, Message: rule + " " + string(status)}
	}
	validation := func(rule string, status eval.Status) eval.RuleResult {
		return rr("require-labels", rule, eval.RuleValidation, status)
	}
	run := func(res *Resource, byOp map[string][]response) *resourceRun {
		return &resourceRun{res: res, responses: byOp}
	}
	s := &suiteRun{
		r:        &runner{opts: Options{StrictPolicies: strict}, load: newLoader(fileOptions{})},
		dir:      "testdata/mutate",
		policies: pols,
	}
	s.resources = []*resourceRun{
		run(obj("v1", "Pod", "default", "a"), map[string][]response{
			"": {
				{pol: addLabels, results: []eval.RuleResult{rr("add-labels", "add", eval.RuleMutation, eval.StatusError)}},
				{pol: requireLabels, results: []eval.RuleResult{validation("check", eval.StatusPass), validation("other", eval.StatusSkip)}},
			},
			"DELETE": {{pol: requireLabels, results: []eval.RuleResult{validation("check", eval.StatusFail)}}},
		}),
		run(obj("v1", "Pod", "shop", "a"), map[string][]response{
			"":       {{pol: requireLabels, results: []eval.RuleResult{validation("check", eval.StatusFail)}}},
			"DELETE": {{pol: requireLabels}},
		}),
		run(obj("apps/v1", "Deployment", "default", "d"), map[string][]response{
			"": {{pol: requireLabels, results: []eval.RuleResult{validation("autogen-check", eval.StatusPass)}}},
		}),
		run(obj("batch/v1", "CronJob", "default", "c"), map[string][]response{
			"": {{pol: requireLabels, results: []eval.RuleResult{validation("autogen-cronjob-check", eval.StatusFail)}}},
		}),
		run(obj("v1", "Service", "default", "svc"), map[string][]response{
			"": {{pol: requireLabels}},
		}),
	}
	return s
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		giveStrict bool
		give       ExpectedResult
		want       []Result
	}{
		{
			name: "a name matches every namespace; statuses compared",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"a"}, Result: "pass"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "check"},
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/shop/a", Expected: "pass", Actual: "fail", OK: false, Reason: "Want pass, got fail", ActualRule: "check"},
			},
		},
		{
			name: "namespace/name selects one resource",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"shop/a"}, Result: "fail"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/shop/a", Expected: "fail", Actual: "fail", OK: true, Reason: "Ok", ActualRule: "check"},
			},
		},
		{
			name: "autogen rule answers the rule",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"d"}, Result: "pass"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "apps/v1/Deployment/default/d", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "autogen-check"},
			},
		},
		{
			name: "autogen-cronjob rule answers the rule",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"c"}, Result: "fail"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "batch/v1/CronJob/default/c", Expected: "fail", Actual: "fail", OK: true, Reason: "Ok", ActualRule: "autogen-cronjob-check"},
			},
		},
		{
			name: "a policy response without the rule is Excluded and passes, whatever was expected",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"svc"}, Result: "fail"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Service/default/svc", Expected: "fail", OK: true, Reason: "Excluded", ActualRule: "check"},
			},
		},
		{
			name: "a namespace prefix on the policy is ignored",
			give: ExpectedResult{Policy: "ns/require-labels", Rule: "check", Resources: []string{"default/a"}, Result: "pass"},
			want: []Result{
				{Policy: "ns/require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "check"},
			},
		},
		{
			name: "without a rule every result of the policy is checked",
			give: ExpectedResult{Policy: "require-labels", Resources: []string{"default/a"}, Result: "pass"},
			want: []Result{
				{Policy: "require-labels", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "skip", OK: false, Reason: "Want pass, got skip", ActualRule: "other"},
			},
		},
		{
			name: "resources that match nothing fall back to every resource",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"typo"}, Result: "pass"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "check"},
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/shop/a", Expected: "pass", Actual: "fail", OK: false, Reason: "Want pass, got fail", ActualRule: "check"},
				{Policy: "require-labels", Rule: "check", Resource: "apps/v1/Deployment/default/d", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "autogen-check"},
				{Policy: "require-labels", Rule: "check", Resource: "batch/v1/CronJob/default/c", Expected: "pass", Actual: "fail", OK: false, Reason: "Want pass, got fail", ActualRule: "autogen-cronjob-check"},
				{Policy: "require-labels", Rule: "check", Resource: "v1/Service/default/svc", Expected: "pass", OK: true, Reason: "Excluded", ActualRule: "check"},
			},
		},
		{
			name: "an explicit operation is checked against its own evaluation",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"a"}, Result: "fail", Operation: "DELETE"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "fail", Actual: "fail", OK: true, Reason: "Ok", ActualRule: "check"},
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/shop/a", Expected: "fail", OK: true, Reason: "Excluded", ActualRule: "check"},
			},
		},
		{
			name: "a policy with no response is Not found",
			give: ExpectedResult{Policy: "missing", Rule: "check", Resources: []string{"default/a"}, Result: "pass"},
			want: []Result{
				{Policy: "missing", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", OK: false, Reason: "Not found", ActualRule: "check"},
			},
		},
		{
			name: "an invalid policy is skipped and passes, as in kyverno test",
			give: ExpectedResult{Policy: "broken", Rule: "r", Resources: []string{"default/a"}, Result: "fail"},
			want: []Result{
				{Policy: "broken", Rule: "r", Resource: "v1/Pod/default/a", Expected: "fail", Actual: "skip", OK: true, Reason: "Invalid Policy", ActualRule: "r"},
			},
		},
		{
			name:       "an invalid policy fails with StrictPolicies",
			giveStrict: true,
			give:       ExpectedResult{Policy: "broken", Rule: "r", Resources: []string{"default/a"}, Result: "fail"},
			want: []Result{
				{Policy: "broken", Rule: "r", Resource: "v1/Pod/default/a", Expected: "fail", OK: false, Reason: "Invalid Policy: spec.rules[0].match: match is required", ActualRule: "r"},
			},
		},
		{
			name: "a policy that does not decode fails",
			give: ExpectedResult{Policy: "undecodable", Rule: "r", Resources: []string{"default/a"}, Result: "pass"},
			want: []Result{
				{Policy: "undecodable", Rule: "r", Resource: "v1/Pod/default/a", Expected: "pass", OK: false, Reason: "Invalid Policy: spec: unknown field", ActualRule: "r"},
			},
		},
		{
			name: "a policy kind the engine does not evaluate fails with the reason",
			give: ExpectedResult{Policy: "vpol", Resources: []string{"default/a"}, Result: "pass", IsValidatingPolicy: true},
			want: []Result{
				{Policy: "vpol", Resource: "v1/Pod/default/a", Expected: "pass", OK: false, Reason: "ValidatingPolicy policies are not supported yet"},
			},
		},
		{
			name: "an unsupported rule fails even when an error was expected",
			give: ExpectedResult{Policy: "add-labels", Rule: "add", Resources: []string{"default/a"}, Result: "error"},
			want: []Result{
				{Policy: "add-labels", Rule: "add", Resource: "v1/Pod/default/a", Expected: "error", Actual: "error", OK: false, Reason: "mutate rules are not supported yet", ActualRule: "add"},
			},
		},
		{
			name: "a resource missing from the patched manifest is skipped",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"default/a"}, Result: "pass", PatchedResources: "patched.yaml"},
			want: nil,
		},
		{
			name: "with failOnMissingResources a resource missing from the patched manifest fails",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"default/a"}, Result: "pass", PatchedResources: "patched.yaml", FailOnMissingResources: true},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "pass", OK: false, Reason: "Resource error: resource with name a not found in manifest", ActualRule: "check"},
			},
		},
		{
			name: "a missing patched manifest file fails",
			give: ExpectedResult{Policy: "require-labels", Rule: "check", Resources: []string{"default/a"}, Result: "pass", PatchedResources: "nope.yaml"},
			want: []Result{
				{Policy: "require-labels", Rule: "check", Resource: "v1/Pod/default/a", Expected: "pass", Actual: "pass", OK: false, Reason: "Resource error: load resources: open testdata/mutate/nope.yaml: no such file or directory", ActualRule: "check"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := checkFixture(tt.giveStrict)
			got := s.check("kyverno-test.yaml", tt.give)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Result{}, "Test", "Message"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("check(%+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
