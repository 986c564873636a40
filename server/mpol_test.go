package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// mutatingPolicy returns a MutatingPolicy named name on Pods with one
// mutation (the YAML of a mutations item, indented for it) and the extra
// spec fields given (indented by two spaces).
func mutatingPolicy(name, extraSpec, mutation string) string {
	return `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: ` + name + `
spec:
` + extraSpec + `  autogen:
    podControllers:
      controllers: []
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  mutations:
` + mutation
}

const (
	addTeamMutation = `  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
`
	// An add under a field the Pod does not have: the patch does not
	// apply.
	badPatchMutation = `  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/spec/missing/nodeName", value: "n"}]'
`
)

// TestMutatingPoliciesAtAdmission serves MutatingPolicies from a
// --policies folder and answers an admission request as Kyverno's mpol
// webhook does: the patch of the mutation; an error denies the request
// with Kyverno's message under failurePolicy Fail and lets it in under
// Ignore, with no patch either way; a policy with targetMatchConstraints
// is skipped at admission; a NamespacedMutatingPolicy applies in its
// namespace only.
func TestMutatingPoliciesAtAdmission(t *testing.T) {
	addLabel := []map[string]any{{"op": "add", "path": "/metadata/labels/team", "value": "a"}}
	tests := []struct {
		name        string
		policy      string
		namespace   string
		wantAllowed bool
		// wantMessage has %s for the message of the first result.
		wantMessage string
		wantPatch   []map[string]any
		wantResults []verdictv1.Result
	}{
		{
			name:        "ApplyConfiguration",
			policy:      mutatingPolicy("add-team", "", addTeamMutation),
			wantAllowed: true,
			wantPatch:   addLabel,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_PASS},
		},
		{
			name:        "patch that does not apply, failurePolicy Fail",
			policy:      mutatingPolicy("bad-patch", "", badPatchMutation),
			wantMessage: "Resource: default/p, Kind: Pod, Errors: [Policy bad-patch: %s]",
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_ERROR},
		},
		{
			name:        "patch that does not apply, failurePolicy Ignore",
			policy:      mutatingPolicy("bad-patch", "  failurePolicy: Ignore\n", badPatchMutation),
			wantAllowed: true,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_ERROR},
		},
		{
			name: "targetMatchConstraints: skipped at admission",
			policy: mutatingPolicy("add-team-existing", `  evaluation:
    mutateExisting:
      enabled: true
  targetMatchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
`, addTeamMutation),
			wantAllowed: true,
		},
		{
			name: "namespaced, in its namespace",
			policy: strings.Replace(strings.Replace(mutatingPolicy("ns-team", "", addTeamMutation),
				"kind: MutatingPolicy", "kind: NamespacedMutatingPolicy", 1), "  name: ns-team\n", "  name: ns-team\n  namespace: default\n", 1),
			wantAllowed: true,
			wantPatch:   addLabel,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_PASS},
		},
		{
			name: "namespaced, in another namespace",
			policy: strings.Replace(strings.Replace(mutatingPolicy("ns-team", "", addTeamMutation),
				"kind: MutatingPolicy", "kind: NamespacedMutatingPolicy", 1), "  name: ns-team\n", "  name: ns-team\n  namespace: team-b\n", 1),
			wantAllowed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, src := policyFolder(t, map[string]string{"policy.yaml": tt.policy})
			ts := startServer(t, Options{Sources: []PolicySource{src}})
			got, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{
				Object:    pod(t, "p", "default", "nginx", map[string]string{"app": "x"}),
				Operation: verdictv1.Operation_OPERATION_CREATE,
			})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var results []verdictv1.Result
			for _, r := range got.GetResults() {
				results = append(results, r.GetResult())
			}
			if diff := cmp.Diff(tt.wantResults, results, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
			wantMessage := tt.wantMessage
			if wantMessage != "" {
				wantMessage = fmt.Sprintf(wantMessage, got.GetResults()[0].GetMessage())
			}
			if got.GetAllowed() != tt.wantAllowed || got.GetMessage() != wantMessage {
				t.Errorf("Evaluate(%s) = allowed %v, message %q; want %v, %q", tt.name, got.GetAllowed(), got.GetMessage(), tt.wantAllowed, wantMessage)
			}
			var patch []map[string]any
			if p := got.GetJsonPatch(); len(p) > 0 {
				if err := json.Unmarshal(p, &patch); err != nil {
					t.Fatalf("Evaluate(%s) patch %s: %v", tt.name, p, err)
				}
			}
			if diff := cmp.Diff(tt.wantPatch, patch, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate(%s) patch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestMutatingPoliciesListedAndValidated lists MutatingPolicies of a
// folder (one whose CEL does not compile with its field path) and checks
// them with ValidatePolicies and as inline policies.
func TestMutatingPoliciesListedAndValidated(t *testing.T) {
	broken := strings.Replace(mutatingPolicy("broken", "", addTeamMutation), `{"team": "a"}`, `{"team": (}`, 1)
	_, src := policyFolder(t, map[string]string{
		"mpol.yaml":   mutatingPolicy("add-team", "", addTeamMutation),
		"broken.yaml": broken,
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	resp, err := c.ListPolicies(t.Context(), &verdictv1.ListPoliciesRequest{})
	if err != nil {
		t.Fatalf("ListPolicies: %v", err)
	}
	var got []string
	for _, p := range resp.GetPolicies() {
		s := p.GetKind() + " " + p.GetName()
		if p.GetReady() {
			s += " ready"
		}
		for _, e := range p.GetErrors() {
			s += " " + e.GetCode() + " at " + e.GetPath()
		}
		got = append(got, s)
	}
	want := []string{
		"MutatingPolicy add-team ready",
		"MutatingPolicy broken invalid_policy at spec.mutations[0].applyConfiguration.expression",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListPolicies (-want +got):\n%s", diff)
	}

	vr, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{
		[]byte(mutatingPolicy("add-team", "", addTeamMutation)), []byte(broken),
	}})
	if err != nil {
		t.Fatalf("ValidatePolicies: %v", err)
	}
	var validated []string
	for _, d := range vr.GetDocuments() {
		s := strings.Join(d.GetPolicies(), ",")
		for _, e := range d.GetErrors() {
			s += " " + e.GetCode() + " at " + e.GetPath()
		}
		validated = append(validated, s)
	}
	wantValidated := []string{"MutatingPolicy/add-team", "MutatingPolicy/broken invalid_policy at spec.mutations[0].applyConfiguration.expression"}
	if diff := cmp.Diff(wantValidated, validated); diff != "" {
		t.Errorf("ValidatePolicies (-want +got):\n%s", diff)
	}

	er, err := c.Evaluate(t.Context(), inlineDocs(pod(t, "p", "default", "nginx", map[string]string{"app": "x"}), mutatingPolicy("inline-team", "", addTeamMutation)))
	if err != nil {
		t.Fatalf("Evaluate(inline): %v", err)
	}
	if len(er.GetResults()) != 1 || er.GetResults()[0].GetPolicy() != "inline-team" || len(er.GetJsonPatch()) == 0 {
		t.Errorf("Evaluate(inline) = results %v, patch %s; want one result of inline-team and a patch", er.GetResults(), er.GetJsonPatch())
	}
}
