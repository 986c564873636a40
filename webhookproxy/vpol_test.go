package webhookproxy_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/webhookproxy"
)

// labelValidatingPolicy is a ValidatingPolicy named name that requires the
// label on Pods, with validationActions actions.
func labelValidatingPolicy(name, label, actions string) string {
	return fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: %[1]s
spec:
  validationActions: %[3]s
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  validations:
  - expression: "'%[2]s' in object.metadata.labels"
    message: the label %[2]s is required
`, name, label, actions)
}

// TestProxyValidatingPolicies sends Pods through the proxy to a decision
// server holding ValidatingPolicies: Deny blocks with Kyverno's message,
// Warn adds a warning, Audit only reports.
func TestProxyValidatingPolicies(t *testing.T) {
	c := startDecisionServer(t,
		labelValidatingPolicy("deny-team", "team", "[Deny]"),
		labelValidatingPolicy("warn-owner", "owner", "[Warn]"),
		labelValidatingPolicy("audit-cost", "cost", "[Audit]"))
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	podWith := func(labels string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"shop","labels":{` + labels + `}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	}
	tests := []struct {
		name string
		path string
		give string
		want map[string]any
	}{{
		name: "deny blocks with the message",
		path: "/validate",
		give: podWith(`"owner":"a","cost":"1"`),
		want: map[string]any{"uid": "u", "allowed": false, "status": map[string]any{
			"metadata": map[string]any{}, "status": "Failure", "reason": "Forbidden", "code": 403.0,
			"message": "Policy deny-team failed: the label team is required",
		}},
	}, {
		name: "deny blocks on the failurePolicy Fail path",
		path: "/validate/fail",
		give: podWith(`"owner":"a","cost":"1"`),
		want: map[string]any{"uid": "u", "allowed": false, "status": map[string]any{
			"metadata": map[string]any{}, "status": "Failure", "reason": "Forbidden", "code": 403.0,
			"message": "Policy deny-team failed: the label team is required",
		}},
	}, {
		name: "the failurePolicy Ignore path holds no policy",
		path: "/validate/ignore",
		give: podWith(`"owner":"a","cost":"1"`),
		want: map[string]any{"uid": "u", "allowed": true},
	}, {
		name: "warn adds a warning",
		path: "/validate",
		give: podWith(`"team":"a","cost":"1"`),
		want: map[string]any{"uid": "u", "allowed": true, "warnings": []any{"Policy warn-owner failed: the label owner is required"}},
	}, {
		name: "audit only reports",
		path: "/validate",
		give: podWith(`"team":"a","owner":"b"`),
		want: map[string]any{"uid": "u", "allowed": true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, raw := p.post(t, tt.path, review("u", "CREATE", "Pod", "shop", tt.give))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			if diff := cmp.Diff(tt.want, responseOf(body)); diff != "" {
				t.Errorf("POST %s (%s) response mismatch (-want +got):\n%s", tt.path, tt.name, diff)
			}
		})
	}
}
