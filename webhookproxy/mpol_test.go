package webhookproxy_test

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/webhookproxy"
)

// addTeamMutatingPolicy adds the label team: a to Pods.
const addTeamMutatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: add-team
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
`

// TestProxyMutatingPolicies sends a Pod through the proxy's mutate paths
// to a decision server holding a MutatingPolicy (failurePolicy Fail): the
// /mutate and /mutate/fail answers carry its JSON Patch; /mutate/ignore
// holds no policy.
func TestProxyMutatingPolicies(t *testing.T) {
	c := startDecisionServer(t, addTeamMutatingPolicy)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"shop","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	patched := map[string]any{
		"uid": "u", "allowed": true, "patchType": "JSONPatch",
		"patch": base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels/team","value":"a"}]`)),
	}
	tests := []struct {
		path string
		want map[string]any
	}{
		{"/mutate", patched},
		{"/mutate/fail", patched},
		{"/mutate/ignore", map[string]any{"uid": "u", "allowed": true}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body, raw := p.post(t, tt.path, review("u", "CREATE", "Pod", "shop", pod))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			if diff := cmp.Diff(tt.want, responseOf(body)); diff != "" {
				t.Errorf("POST %s response mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
