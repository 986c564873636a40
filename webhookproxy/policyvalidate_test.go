package webhookproxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/webhookproxy"
)

const backgroundUserInfoPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: who-created
spec:
  background: true
  rules:
  - name: check-user
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    validate:
      message: "created by {{ request.userInfo.username }}"
      deny:
        conditions:
          any:
          - key: "{{ request.userInfo.username }}"
            operator: Equals
            value: mallory
`

func policyJSON(t *testing.T, y string) string {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPolicyValidate checks /policyvalidate: a policy the engine refuses
// is denied at admission with its problems, a valid one is allowed, and a
// DELETE is never refused.
func TestPolicyValidate(t *testing.T) {
	c := startDecisionServer(t)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	fixed := strings.Replace(backgroundUserInfoPolicy, "background: true", "background: false", 1)
	tests := []struct {
		name        string
		op, object  string
		wantAllowed bool
		wantMessage []string
	}{
		{"userInfo in a background policy", "CREATE", policyJSON(t, backgroundUserInfoPolicy), false,
			[]string{"ClusterPolicy who-created is invalid:", "spec.rules[0]: ", "set spec.background to false"}},
		{"the same with background: false", "UPDATE", policyJSON(t, fixed), true, nil},
		{"delete", "DELETE", policyJSON(t, backgroundUserInfoPolicy), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := review("u1", tt.op, "ClusterPolicy", "", tt.object)
			code, out, raw := p.post(t, "/policyvalidate", body)
			if code != http.StatusOK {
				t.Fatalf("POST /policyvalidate = %d %s, want 200", code, raw)
			}
			resp := responseOf(out)
			if resp["allowed"] != tt.wantAllowed {
				t.Fatalf("POST /policyvalidate (%s) allowed = %v, want %v (response %v)", tt.name, resp["allowed"], tt.wantAllowed, resp)
			}
			st, _ := resp["status"].(map[string]any)
			msg, _ := st["message"].(string)
			for _, w := range tt.wantMessage {
				if !strings.Contains(msg, w) {
					t.Errorf("POST /policyvalidate (%s) message = %q, want it to contain %q", tt.name, msg, w)
				}
			}
		})
	}
}

// TestPolicyValidateServerDown: without a decision server the policy is
// refused (fail closed) unless the proxy fails open.
func TestPolicyValidateServerDown(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		p := startProxy(t, downDecider(t), webhookproxy.Options{FailOpen: failOpen, Timeout: 2 * time.Second}, nil, nil)
		code, out, raw := p.post(t, "/policyvalidate", review("u1", "CREATE", "ClusterPolicy", "", policyJSON(t, backgroundUserInfoPolicy)))
		if code != http.StatusOK {
			t.Fatalf("POST /policyvalidate = %d %s, want 200", code, raw)
		}
		if got := responseOf(out)["allowed"]; got != failOpen {
			b, _ := json.Marshal(out)
			t.Errorf("POST /policyvalidate with the server down, fail open %v: allowed = %v, want %v (%s)", failOpen, got, failOpen, b)
		}
	}
}
