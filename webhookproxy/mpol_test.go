package webhookproxy_test

import (
	"encoding/base64"
	"net/http"
	"strings"
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

// badPatchMutatingPolicy adds under a field Pods do not have: the patch
// does not apply. FAILURE is its failurePolicy.
const badPatchMutatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: bad-patch
spec:
  failurePolicy: FAILURE
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/spec/missing/field", value: "x"}]'
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

// TestProxyMutatingPolicyErrors: a MutatingPolicy whose patch does not
// apply denies on /validate/fail when its failurePolicy is Fail, with
// Kyverno's message, and the mutate path carries no patch; under Ignore
// (/validate/ignore) the request is allowed.
func TestProxyMutatingPolicyErrors(t *testing.T) {
	const msg = `Resource: shop/p, Kind: Pod, Errors: [Policy bad-patch: failed to evaluate policy: JSON Patch: add operation does not apply: doc is missing path: "/spec/missing/field": missing value]`
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"shop"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	tests := []struct {
		name, failure, path string
		want                map[string]any
	}{
		{"Fail denies", "Fail", "/validate/fail", map[string]any{"uid": "u", "allowed": false, "status": map[string]any{
			"metadata": map[string]any{}, "status": "Failure", "reason": "Forbidden", "code": 403.0, "message": msg,
		}}},
		{"Fail: no patch", "Fail", "/mutate/fail", map[string]any{"uid": "u", "allowed": true}},
		{"Ignore allows", "Ignore", "/validate/ignore", map[string]any{"uid": "u", "allowed": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startDecisionServer(t, strings.Replace(badPatchMutatingPolicy, "FAILURE", tt.failure, 1))
			p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
			code, body, raw := p.post(t, tt.path, review("u", "CREATE", "Pod", "shop", pod))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			if diff := cmp.Diff(tt.want, responseOf(body)); diff != "" {
				t.Errorf("POST %s (%s) response mismatch (-want +got):\n%s", tt.path, tt.name, diff)
			}
		})
	}
}
