package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// failurePolicyDoc is a ClusterPolicy requiring label name on Pods, with
// the given spec lines (failurePolicy, webhookConfiguration).
func failurePolicyDoc(name, spec string) string {
	return `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: ` + name + `
spec:
` + spec + `
  rules:
    - name: check
      match:
        any:
          - resources:
              kinds: [Pod]
      validate:
        failureAction: Enforce
        message: "label ` + name + ` is required"
        pattern:
          metadata:
            labels:
              ` + name + `: "?*"
`
}

func TestPolicySelectorFailurePolicy(t *testing.T) {
	_, src := policyFolder(t, map[string]string{
		"default.yaml":  failurePolicyDoc("fp-default", "  background: true"),
		"fail.yaml":     failurePolicyDoc("fp-fail", "  failurePolicy: Fail"),
		"ignore.yaml":   failurePolicyDoc("fp-ignore", "  failurePolicy: Ignore"),
		"webhook.yaml":  failurePolicyDoc("fp-webhook-ignore", "  failurePolicy: Fail\n  webhookConfiguration:\n    failurePolicy: Ignore"),
		"webhook2.yaml": failurePolicyDoc("fp-webhook-fail", "  failurePolicy: Ignore\n  webhookConfiguration:\n    failurePolicy: Fail"),
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	tests := []struct {
		name string
		give *verdictv1.PolicySelector
		want []string
	}{
		{name: "unspecified picks all", give: &verdictv1.PolicySelector{}, want: []string{"fp-default", "fp-fail", "fp-ignore", "fp-webhook-fail", "fp-webhook-ignore"}},
		{name: "fail", give: &verdictv1.PolicySelector{FailurePolicy: verdictv1.FailurePolicy_FAILURE_POLICY_FAIL}, want: []string{"fp-default", "fp-fail", "fp-webhook-fail"}},
		{name: "ignore", give: &verdictv1.PolicySelector{FailurePolicy: verdictv1.FailurePolicy_FAILURE_POLICY_IGNORE}, want: []string{"fp-ignore", "fp-webhook-ignore"}},
		{name: "ignore and names", give: &verdictv1.PolicySelector{FailurePolicy: verdictv1.FailurePolicy_FAILURE_POLICY_IGNORE, Names: []string{"fp-fail", "fp-ignore"}}, want: []string{"fp-ignore"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
				Object:   pod(t, "p", "default", "nginx:1.27", nil),
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: tt.give},
			})
			if err != nil {
				t.Fatalf("Evaluate(%v): %v", tt.give, err)
			}
			var got []string
			for _, p := range resp.GetPolicies() {
				got = append(got, p.GetName())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%v) policies (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
