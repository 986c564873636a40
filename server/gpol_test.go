package server

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

const netpolGeneratingPolicy = `apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata:
  name: add-networkpolicy
spec:
  evaluation:
    synchronize:
      enabled: true
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [namespaces]
  generate:
  - expression: >-
      generator.Apply(object.metadata.name, [{"apiVersion": dyn("networking.k8s.io/v1"), "kind": dyn("NetworkPolicy"),
        "metadata": dyn({"name": "default-deny"}), "spec": dyn({"podSelector": dyn({}), "policyTypes": dyn(["Ingress", "Egress"])})}])
`

const podsDeletingPolicy = `apiVersion: policies.kyverno.io/v1
kind: DeletingPolicy
metadata:
  name: cleanup
spec:
  schedule: "*/1 * * * *"
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      resources: [pods]
`

func TestGeneratingAndDeletingPolicies(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"gen.yaml": netpolGeneratingPolicy, "del.yaml": podsDeletingPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)

	got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
		Object:    mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a", "uid": "u-1"}}),
		Operation: verdictv1.Operation_OPERATION_CREATE,
	})
	if err != nil {
		t.Fatalf("Evaluate(Namespace): %v", err)
	}
	if len(got.GetGenerates()) != 1 {
		t.Fatalf("Evaluate(Namespace).Generates = %v, want one intent", got.GetGenerates())
	}
	g := got.GetGenerates()[0]
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name, Namespace string
			Labels          map[string]string
		} `json:"metadata"`
	}
	if err := json.Unmarshal(g.GetResource(), &obj); err != nil {
		t.Fatal(err)
	}
	type intent struct {
		Policy, Rule          string
		Action                verdictv1.GenerateAction
		Synchronize           bool
		Kind, Namespace, Name string
		Labels                map[string]string
	}
	// The labels Kyverno's generating policy controller puts on what it
	// generates (pkg/cel/libs addGenerateLabels).
	wantLabels := map[string]string{
		"app.kubernetes.io/managed-by":          "kyverno",
		"generate.kyverno.io/policy-name":       "add-networkpolicy",
		"generate.kyverno.io/trigger-name":      "team-a",
		"generate.kyverno.io/trigger-namespace": "",
		"generate.kyverno.io/trigger-uid":       "u-1",
		"generate.kyverno.io/trigger-kind":      "Namespace",
		"generate.kyverno.io/trigger-group":     "",
		"generate.kyverno.io/trigger-version":   "v1",
	}
	gotIntent := intent{g.GetPolicy(), g.GetRule(), g.GetAction(), g.GetSynchronize(), obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name, obj.Metadata.Labels}
	want := intent{"add-networkpolicy", "add-networkpolicy", verdictv1.GenerateAction_GENERATE_ACTION_CREATE, true, "NetworkPolicy", "team-a", "default-deny", wantLabels}
	if diff := cmp.Diff(want, gotIntent); diff != "" {
		t.Errorf("Evaluate(Namespace) generate intent mismatch (-want +got):\n%s", diff)
	}

	// The DeletingPolicy is served, and gives no result on a request.
	p, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil), Operation: verdictv1.Operation_OPERATION_CREATE})
	if err != nil {
		t.Fatalf("Evaluate(Pod): %v", err)
	}
	if len(p.GetResults()) != 0 || !p.GetAllowed() {
		t.Errorf("Evaluate(Pod) = allowed %v, results %v; want allowed without results", p.GetAllowed(), p.GetResults())
	}
	list, _ := listPolicies(t, c)
	wantList := []listed{{Name: "cleanup", Ready: true}, {Name: "add-networkpolicy", Ready: true}}
	if diff := cmp.Diff(wantList, list, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(listed{}, "Hash")); diff != "" {
		t.Errorf("ListPolicies mismatch (-want +got):\n%s", diff)
	}
}
