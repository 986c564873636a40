package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// admissionPolicy is a ValidatingAdmissionPolicy that caps the replicas of
// Deployments at the maxReplicas of its ConfigMap params, labelled for
// Kyverno's background reports when reported is true.
func admissionPolicy(name string, reported bool) string {
	labels := ""
	if reported {
		labels = "  labels: {reports.kyverno.io/enabled: \"true\"}\n"
	}
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ` + name + "\n" + labels + `spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "params == null || object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'at most ' + params.data.maxReplicas + ' replicas in ' + namespaceObject.metadata.labels['env']"
`
}

func admissionBinding(name, policyName, extra string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ` + name + "\n" + extra + `spec:
  policyName: ` + policyName + `
  validationActions: [Deny]
  paramRef: {name: limits, parameterNotFoundAction: Deny}
`
}

func deploymentJSON(name, namespace string, replicas int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q},"spec":{"replicas":%d}}`, name, namespace, replicas))
}

// paramsLookup is a Lookup with Namespaces and ConfigMap params by
// namespace/name; it records the binding of each params query.
type paramsLookup struct {
	nsLookup
	params   map[string]map[string]any
	bindings chan string
}

func (l paramsLookup) Params(_ context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	l.bindings <- q.Binding
	ns := q.Namespace
	if ns == "" {
		ns = q.RequestNamespace
	}
	if p, ok := l.params[ns+"/"+q.Name]; ok && q.Kind == "ConfigMap" {
		return []map[string]any{p}, nil
	}
	return nil, fmt.Errorf("configmaps %q: %w", q.Name, engine.ErrNotFound)
}

// TestVAPFromTheFolder serves a ValidatingAdmissionPolicy and its binding
// from a --policies folder. Kubernetes enforces them: at admission they
// give no result (the webhook proxy never denies for them); a background
// evaluation gives the result of the binding, with its params and the
// Namespace from the server's Lookup, as Kyverno's background scans do. A
// binding labelled reports.kyverno.io/disabled is left out, as in
// Kyverno, and so is a policy without reports.kyverno.io/enabled.
func TestVAPFromTheFolder(t *testing.T) {
	lookup := paramsLookup{
		nsLookup: nsLookup{namespaces: map[string]map[string]any{
			"shop": {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop", "labels": map[string]any{"env": "prod"}}},
		}},
		params: map[string]map[string]any{
			"shop/limits": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "limits", "namespace": "shop"}, "data": map[string]any{"maxReplicas": "3"}},
		},
		bindings: make(chan string, 100),
	}
	tests := []struct {
		name        string
		giveFiles   map[string]string
		giveMode    verdictv1.Mode
		giveObject  []byte
		wantResults []string
	}{
		{
			name:       "admission: not evaluated",
			giveFiles:  map[string]string{"vap.yaml": admissionPolicy("replicas", true) + "---\n" + admissionBinding("replicas-binding", "replicas", "")},
			giveMode:   verdictv1.Mode_MODE_ADMISSION,
			giveObject: deploymentJSON("d1", "shop", 5),
		},
		{
			name:        "background: the binding's result",
			giveFiles:   map[string]string{"vap.yaml": admissionPolicy("replicas", true), "binding.yaml": admissionBinding("replicas-binding", "replicas", "")},
			giveMode:    verdictv1.Mode_MODE_BACKGROUND,
			giveObject:  deploymentJSON("d1", "shop", 5),
			wantResults: []string{"replicas/replicas RESULT_FAIL at most 3 replicas in prod map[binding:replicas-binding] enforce=false"},
		},
		{
			name:        "background: a pass",
			giveFiles:   map[string]string{"vap.yaml": admissionPolicy("replicas", true), "binding.yaml": admissionBinding("replicas-binding", "replicas", "")},
			giveMode:    verdictv1.Mode_MODE_BACKGROUND,
			giveObject:  deploymentJSON("d1", "shop", 2),
			wantResults: []string{"replicas/replicas RESULT_PASS  map[binding:replicas-binding] enforce=false"},
		},
		{
			name: "background: binding left out of reports",
			giveFiles: map[string]string{"vap.yaml": admissionPolicy("replicas", true),
				"binding.yaml": admissionBinding("replicas-binding", "replicas", "  labels: {reports.kyverno.io/disabled: \"\"}\n")},
			giveMode:    verdictv1.Mode_MODE_BACKGROUND,
			giveObject:  deploymentJSON("d1", "shop", 5),
			wantResults: []string{"replicas/replicas RESULT_PASS  map[] enforce=false"},
		},
		{
			name:       "background: policy not labelled for reports",
			giveFiles:  map[string]string{"vap.yaml": admissionPolicy("replicas", false), "binding.yaml": admissionBinding("replicas-binding", "replicas", "")},
			giveMode:   verdictv1.Mode_MODE_BACKGROUND,
			giveObject: deploymentJSON("d1", "shop", 5),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, src := policyFolder(t, tt.giveFiles)
			ts := startServer(t, Options{Sources: []PolicySource{src}, Lookup: lookup})
			got, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: tt.giveObject, Mode: tt.giveMode})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if !got.GetAllowed() || len(got.GetWarnings()) > 0 {
				t.Errorf("Evaluate(%s) = allowed %v, warnings %v; want allowed without warnings", tt.name, got.GetAllowed(), got.GetWarnings())
			}
			var results []string
			for _, r := range got.GetResults() {
				results = append(results, fmt.Sprintf("%s/%s %s %s %v enforce=%v", r.GetPolicy(), r.GetRule(), r.GetResult(), r.GetMessage(), r.GetProperties(), r.GetEnforce()))
			}
			if diff := cmp.Diff(tt.wantResults, results); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	close(lookup.bindings)
	for b := range lookup.bindings {
		if b != "replicas-binding" {
			t.Errorf("Lookup.Params got binding %q, want replicas-binding", b)
		}
	}
}

// TestVAPListed lists ValidatingAdmissionPolicies and their bindings next
// to the other kinds; one whose CEL does not compile, and a binding
// without policyName, with their field paths; a ValidatingAdmissionPolicy
// with the name of a ClusterPolicy is a duplicate.
func TestVAPListed(t *testing.T) {
	broken := strings.Replace(admissionPolicy("broken", true), "params == null ||", "params == null |", 1)
	_, src := policyFolder(t, map[string]string{
		"team.yaml":     teamLabelPolicy,
		"vap.yaml":      admissionPolicy("replicas", true),
		"binding.yaml":  admissionBinding("replicas-binding", "replicas", ""),
		"broken.yaml":   broken,
		"nameless.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: nameless}\nspec: {validationActions: [Deny]}\n",
		"dup.yaml":      admissionPolicy("require-team-label", true),
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	resp, err := ts.client(t).ListPolicies(t.Context(), &verdictv1.ListPoliciesRequest{})
	if err != nil {
		t.Fatalf("ListPolicies: %v", err)
	}
	var got []string
	for _, p := range resp.GetPolicies() {
		s := p.GetKind() + " " + p.GetName()
		if p.GetReady() {
			s += " ready"
		}
		if p.GetBackground() {
			s += " background"
		}
		for _, e := range p.GetErrors() {
			s += " " + e.GetCode() + " at " + e.GetPath()
		}
		got = append(got, s)
	}
	want := []string{
		"ClusterPolicy require-team-label ready background",
		"ValidatingAdmissionPolicy broken invalid_policy at spec.validations[0].expression",
		"ValidatingAdmissionPolicy replicas ready background",
		"ValidatingAdmissionPolicyBinding nameless invalid_policy at spec.policyName",
		"ValidatingAdmissionPolicyBinding replicas-binding ready",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListPolicies (-want +got):\n%s", diff)
	}
	var codes []string
	for _, se := range resp.GetSourceErrors() {
		for _, e := range se.GetErrors() {
			codes = append(codes, e.GetCode())
		}
	}
	if diff := cmp.Diff([]string{string(CodeDuplicatePolicy)}, codes); diff != "" {
		t.Errorf("ListPolicies source errors (-want +got):\n%s", diff)
	}
}

// TestValidatePoliciesVAP checks ValidatingAdmissionPolicies and their
// bindings with ValidatePolicies: errors name the field.
func TestValidatePoliciesVAP(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	waitServing(t, dial(t, ts.addr))
	tests := []struct {
		name       string
		give       string
		wantPolicy string
		wantErrors []string
	}{
		{"valid", admissionPolicy("replicas", true), "ValidatingAdmissionPolicy/replicas", nil},
		{"validation not bool", strings.Replace(admissionPolicy("replicas", true), `"params == null || object.spec.replicas <= int(params.data.maxReplicas)"`, `"'yes'"`, 1),
			"ValidatingAdmissionPolicy/replicas", []string{"invalid_policy at spec.validations[0].expression"}},
		{"unknown field", strings.Replace(admissionPolicy("replicas", true), "  validations:", "  validation:", 1),
			"ValidatingAdmissionPolicy/replicas", []string{"decode_error at spec.validation"}},
		{"binding", admissionBinding("b", "replicas", ""), "ValidatingAdmissionPolicyBinding/b", nil},
		{"binding without policyName", admissionBinding("b", `""`, ""), "ValidatingAdmissionPolicyBinding/b", []string{"invalid_policy at spec.policyName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(tt.give)}})
			if err != nil {
				t.Fatalf("ValidatePolicies: %v", err)
			}
			d := resp.GetDocuments()[0]
			var got []string
			for _, e := range d.GetErrors() {
				got = append(got, e.GetCode()+" at "+e.GetPath())
			}
			if diff := cmp.Diff(tt.wantErrors, got); diff != "" || !cmp.Equal([]string{tt.wantPolicy}, d.GetPolicies()) {
				t.Errorf("ValidatePolicies(%s) = %v %v, want %s %v", tt.name, d.GetPolicies(), got, tt.wantPolicy, tt.wantErrors)
			}
		})
	}
}
