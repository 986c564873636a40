package webhookproxy_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/webhookproxy"
)

// TestProxyNeverEnforcesValidatingAdmissionPolicies sends a Deployment
// that fails a ValidatingAdmissionPolicy bound with Deny (and labelled for
// background reports) through the proxy, on every path: the API server
// enforces ValidatingAdmissionPolicies itself, so the proxy allows it
// without warnings.
func TestProxyNeverEnforcesValidatingAdmissionPolicies(t *testing.T) {
	c := startDecisionServer(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: check-replicas
  labels: {reports.kyverno.io/enabled: "true"}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: object.spec.replicas <= 2
    message: at most 2 replicas
`, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: check-replicas-binding}
spec:
  policyName: check-replicas
  validationActions: [Deny, Warn]
`)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"shop"},"spec":{"replicas":5}}`
	for _, path := range []string{"/validate", "/validate/fail", "/validate/ignore"} {
		code, body, raw := p.post(t, path, review("u", "CREATE", "Deployment", "shop", deployment))
		if code != http.StatusOK {
			t.Fatalf("POST %s = %d %s, want 200", path, code, raw)
		}
		if diff := cmp.Diff(map[string]any{"uid": "u", "allowed": true}, responseOf(body)); diff != "" {
			t.Errorf("POST %s response mismatch (-want +got):\n%s", path, diff)
		}
	}
}
