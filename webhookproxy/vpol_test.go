package webhookproxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// TestPolicyValidateValidatingPolicy: /policyvalidate refuses a
// ValidatingPolicy whose CEL does not compile, naming the field, and
// allows a valid one.
func TestPolicyValidateValidatingPolicy(t *testing.T) {
	c := startDecisionServer(t)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	valid := labelValidatingPolicy("deny-team", "team", "[Deny]")
	broken := strings.Replace(valid, "'team' in object.metadata.labels", "object.metadata.labels.(", 1)
	tests := []struct {
		name        string
		object      string
		wantAllowed bool
		wantMessage string
	}{
		{"CEL that does not compile", policyJSON(t, broken), false, "ValidatingPolicy deny-team is invalid:\nspec.validations[0].expression: "},
		{"valid", policyJSON(t, valid), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, raw := p.post(t, "/policyvalidate", review("u1", "CREATE", "ValidatingPolicy", "", tt.object))
			if code != http.StatusOK {
				t.Fatalf("POST /policyvalidate = %d %s, want 200", code, raw)
			}
			resp := responseOf(out)
			st, _ := resp["status"].(map[string]any)
			msg, _ := st["message"].(string)
			if resp["allowed"] != tt.wantAllowed || !strings.HasPrefix(msg, tt.wantMessage) {
				t.Errorf("POST /policyvalidate (%s) = allowed %v, message %q; want %v, a message starting %q", tt.name, resp["allowed"], msg, tt.wantAllowed, tt.wantMessage)
			}
		})
	}
}

// TestProxyValidatingPolicyResource: the proxy sends the AdmissionRequest's
// resource, which the resourceRules of a ValidatingPolicy match: the
// plural guessed from the kind ("octopuses", "persons") is not the plural
// of these CRDs.
func TestProxyValidatingPolicyResource(t *testing.T) {
	crdPolicy := func(name, resource, expression, message string) string {
		return `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: ` + name + `
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - {apiGroups: [sea.example.com], apiVersions: [v1], operations: [CREATE], resources: [` + resource + `]}
  validations:
  - expression: "` + expression + `"
    message: ` + message + `
`
	}
	c := startDecisionServer(t,
		crdPolicy("octopus-arms", "octopi", "object.spec.arms == 8", "an octopus has 8 arms"),
		crdPolicy("people-named", "people", "request.resource.resource == 'people' && has(object.spec.name)", "a person has a name"))
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	octopus := schema.GroupVersionKind{Group: "sea.example.com", Version: "v1", Kind: "Octopus"}
	octopi := schema.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "octopi"}
	person := schema.GroupVersionKind{Group: "sea.example.com", Version: "v1", Kind: "Person"}
	people := schema.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "people"}
	tests := []struct {
		name        string
		gvk         schema.GroupVersionKind
		gvr         schema.GroupVersionResource
		give        string
		wantMessage string // "" when allowed
	}{
		{
			name:        "an Octopus with 7 arms",
			gvk:         octopus,
			gvr:         octopi,
			give:        `{"apiVersion":"sea.example.com/v1","kind":"Octopus","metadata":{"name":"o","namespace":"shop"},"spec":{"arms":7}}`,
			wantMessage: "Policy octopus-arms failed: an octopus has 8 arms",
		},
		{
			name: "an Octopus with 8 arms",
			gvk:  octopus,
			gvr:  octopi,
			give: `{"apiVersion":"sea.example.com/v1","kind":"Octopus","metadata":{"name":"o","namespace":"shop"},"spec":{"arms":8}}`,
		},
		{
			name:        "a Person without a name",
			gvk:         person,
			gvr:         people,
			give:        `{"apiVersion":"sea.example.com/v1","kind":"Person","metadata":{"name":"p","namespace":"shop"},"spec":{}}`,
			wantMessage: "Policy people-named failed: a person has a name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, raw := p.post(t, "/validate", reviewOf("u", "CREATE", tt.gvk, tt.gvr, "shop", tt.give))
			if code != http.StatusOK {
				t.Fatalf("POST /validate = %d %s, want 200", code, raw)
			}
			resp := responseOf(body)
			st, _ := resp["status"].(map[string]any)
			msg, _ := st["message"].(string)
			if allowed := tt.wantMessage == ""; resp["allowed"] != allowed || msg != tt.wantMessage {
				t.Errorf("POST /validate (%s) = allowed %v, message %q; want %v, %q", tt.name, resp["allowed"], msg, allowed, tt.wantMessage)
			}
		})
	}
}
