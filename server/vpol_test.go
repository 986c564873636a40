package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// validatingPolicy returns a ValidatingPolicy named name that requires
// the label team on Pods, with the given validationActions.
func validatingPolicy(name, actions string) string {
	return `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: ` + name + `
spec:
  validationActions: ` + actions + `
  autogen:
    podControllers:
      controllers: []
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  validations:
  - expression: "'team' in object.metadata.labels"
    message: the label team is required
`
}

// TestValidatingPoliciesFromTheFolder serves ValidatingPolicies from a
// --policies folder: Deny blocks a failing Pod with Kyverno's message,
// Warn adds a warning, Audit only reports; a policies.kyverno.io
// PolicyException turns the result into a skip.
func TestValidatingPoliciesFromTheFolder(t *testing.T) {
	exception := `apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: exempt-ns
  namespace: default
spec:
  policyRefs:
  - name: deny-team
    kind: ValidatingPolicy
  matchConditions:
  - name: exempt
    expression: "object.metadata.namespace == 'exempt'"
`
	tests := []struct {
		name         string
		policy       string
		give         []byte
		wantAllowed  bool
		wantMessage  string
		wantWarnings []string
		wantResults  []verdictv1.Result
		wantEnforce  []bool
	}{
		{
			name:        "deny, failing Pod",
			policy:      validatingPolicy("deny-team", "[Deny]"),
			give:        pod(t, "p", "default", "nginx", map[string]string{"app": "x"}),
			wantMessage: "Policy deny-team failed: the label team is required",
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_FAIL},
			wantEnforce: []bool{true},
		},
		{
			name:        "deny, passing Pod",
			policy:      validatingPolicy("deny-team", "[Deny]"),
			give:        pod(t, "p", "default", "nginx", map[string]string{"team": "a"}),
			wantAllowed: true,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_PASS},
			wantEnforce: []bool{true},
		},
		{
			name:        "deny, exempt namespace",
			policy:      validatingPolicy("deny-team", "[Deny]"),
			give:        pod(t, "p", "exempt", "nginx", map[string]string{"app": "x"}),
			wantAllowed: true,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_SKIP},
			wantEnforce: []bool{true},
		},
		{
			name:        "deny, not scored: the fail still blocks",
			policy:      strings.Replace(validatingPolicy("deny-team", "[Deny]"), "  name: deny-team\n", "  name: deny-team\n  annotations:\n    policies.kyverno.io/scored: \"false\"\n", 1),
			give:        pod(t, "p", "default", "nginx", map[string]string{"app": "x"}),
			wantMessage: "Policy deny-team failed: the label team is required",
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_WARN},
			wantEnforce: []bool{true},
		},
		{
			name:         "warn",
			policy:       validatingPolicy("warn-team", "[Warn]"),
			give:         pod(t, "p", "default", "nginx", map[string]string{"app": "x"}),
			wantAllowed:  true,
			wantWarnings: []string{"Policy warn-team failed: the label team is required"},
			wantResults:  []verdictv1.Result{verdictv1.Result_RESULT_FAIL},
			wantEnforce:  []bool{false},
		},
		{
			name:        "audit",
			policy:      validatingPolicy("audit-team", "[Audit]"),
			give:        pod(t, "p", "default", "nginx", map[string]string{"app": "x"}),
			wantAllowed: true,
			wantResults: []verdictv1.Result{verdictv1.Result_RESULT_FAIL},
			wantEnforce: []bool{false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, src := policyFolder(t, map[string]string{"policy.yaml": tt.policy, "exception.yaml": exception})
			ts := startServer(t, Options{Sources: []PolicySource{src}})
			got, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: tt.give})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var results []verdictv1.Result
			var enforce []bool
			for _, r := range got.GetResults() {
				results = append(results, r.GetResult())
				enforce = append(enforce, r.GetEnforce())
			}
			if got.GetAllowed() != tt.wantAllowed || got.GetMessage() != tt.wantMessage {
				t.Errorf("Evaluate(%s) = allowed %v, message %q; want %v, %q", tt.name, got.GetAllowed(), got.GetMessage(), tt.wantAllowed, tt.wantMessage)
			}
			if diff := cmp.Diff(tt.wantWarnings, got.GetWarnings(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate(%s) warnings (-want +got):\n%s", tt.name, diff)
			}
			if !cmp.Equal(tt.wantResults, results) || !cmp.Equal(tt.wantEnforce, enforce) {
				t.Errorf("Evaluate(%s) = results %v, enforce %v; want %v, %v", tt.name, results, enforce, tt.wantResults, tt.wantEnforce)
			}
		})
	}
}

// TestValidatingPoliciesListed lists the ValidatingPolicies, the
// NamespacedValidatingPolicies and the policies.kyverno.io
// PolicyExceptions of a folder next to the kyverno.io kinds, and a
// ValidatingPolicy whose CEL does not compile with its field path.
func TestValidatingPoliciesListed(t *testing.T) {
	namespaced := strings.Replace(strings.Replace(validatingPolicy("ns-team", "[Deny]"),
		"kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy", 1),
		"  name: ns-team\n", "  name: ns-team\n  namespace: team-a\n", 1)
	broken := strings.Replace(validatingPolicy("broken", "[Deny]"), "'team' in object.metadata.labels", "object.metadata.labels.(", 1)
	exception := `apiVersion: policies.kyverno.io/v1beta1
kind: PolicyException
metadata:
  name: same-name
  namespace: default
spec:
  policyRefs:
  - {name: deny-team, kind: ValidatingPolicy}
`
	kyvernoException := `apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: same-name
  namespace: default
spec:
  exceptions:
  - policyName: require-team-label
    ruleNames: [check-team]
  match:
    any:
    - resources:
        kinds: [Pod]
`
	_, src := policyFolder(t, map[string]string{
		"team.yaml":          teamLabelPolicy,
		"vpol.yaml":          validatingPolicy("deny-team", "[Deny]"),
		"nvpol.yaml":         namespaced,
		"broken.yaml":        broken,
		"cel-polex.yaml":     exception,
		"kyverno-polex.yaml": kyvernoException,
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	resp, err := c.ListPolicies(t.Context(), &verdictv1.ListPoliciesRequest{})
	if err != nil {
		t.Fatalf("ListPolicies: %v", err)
	}
	var got []string
	for _, p := range resp.GetPolicies() {
		s := p.GetKind() + " " + p.GetNamespace() + "/" + p.GetName()
		if p.GetReady() {
			s += " ready"
		}
		for _, e := range p.GetErrors() {
			s += " " + e.GetCode() + " at " + e.GetPath()
		}
		got = append(got, s)
	}
	want := []string{
		"ClusterPolicy /require-team-label ready",
		"NamespacedValidatingPolicy team-a/ns-team ready",
		"PolicyException default/same-name ready",
		"PolicyException default/same-name ready",
		"ValidatingPolicy /broken invalid_policy at spec.validations[0].expression",
		"ValidatingPolicy /deny-team ready",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListPolicies (-want +got):\n%s\nsource errors: %v", diff, resp.GetSourceErrors())
	}
}

// TestValidatePoliciesValidatingPolicy checks ValidatingPolicies and
// policies.kyverno.io PolicyExceptions with ValidatePolicies: invalid ones
// get errors with the field path.
func TestValidatePoliciesValidatingPolicy(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	waitServing(t, dial(t, ts.addr))
	type doc struct {
		Policies []string
		Codes    []string
		Paths    []string
	}
	tests := []struct {
		name string
		give string
		want doc
	}{
		{"valid", validatingPolicy("deny-team", "[Deny]"), doc{Policies: []string{"ValidatingPolicy/deny-team"}}},
		{"unknown field", strings.Replace(validatingPolicy("deny-team", "[Deny]"), "    message:", "    mesage:", 1), doc{
			Policies: []string{"ValidatingPolicy/deny-team"},
			Codes:    []string{"decode_error"},
			Paths:    []string{"spec.validations[0].mesage"},
		}},
		{"CEL that does not compile", strings.Replace(validatingPolicy("deny-team", "[Deny]"), "'team' in object.metadata.labels", "object.metadata.labels.(", 1), doc{
			Policies: []string{"ValidatingPolicy/deny-team"},
			Codes:    []string{"invalid_policy"},
			Paths:    []string{"spec.validations[0].expression"},
		}},
		{"exception without policyRefs", "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: x, namespace: default}\nspec: {policyRefs: []}\n", doc{
			Policies: []string{"PolicyException/default/x"},
			Codes:    []string{"invalid_policy"},
			Paths:    []string{"spec.policyRefs"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(tt.give)}})
			if err != nil {
				t.Fatalf("ValidatePolicies: %v", err)
			}
			d := resp.GetDocuments()[0]
			got := doc{Policies: d.GetPolicies()}
			for _, e := range d.GetErrors() {
				got.Codes = append(got.Codes, e.GetCode())
				got.Paths = append(got.Paths, e.GetPath())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidatePolicies(%s) (-want +got):\n%s\nerrors: %v", tt.name, diff, d.GetErrors())
			}
		})
	}
}

// nsLookup is a Lookup that has Namespace objects only.
type nsLookup struct {
	eval.Lookup
	namespaces map[string]map[string]any
}

func (l nsLookup) Namespace(_ context.Context, name string) (map[string]any, error) {
	if ns, ok := l.namespaces[name]; ok {
		return ns, nil
	}
	return nil, fmt.Errorf("namespace %s: %w", name, engine.ErrNotFound)
}

// TestValidatingPolicyNamespaceObject: namespaceObject is the Namespace
// the server's Lookup has (kubelookup in a cluster), null without one.
func TestValidatingPolicyNamespaceObject(t *testing.T) {
	policy := strings.Replace(validatingPolicy("ns-env", "[Deny]"),
		`"'team' in object.metadata.labels"`, `"namespaceObject != null && namespaceObject.metadata.labels.env == 'prod'"`, 1)
	_, src := policyFolder(t, map[string]string{"policy.yaml": policy})
	lookup := nsLookup{namespaces: map[string]map[string]any{
		"shop": {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop", "labels": map[string]any{"env": "prod"}}},
		"dev":  {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dev", "labels": map[string]any{"env": "dev"}}},
	}}
	ts := startServer(t, Options{Sources: []PolicySource{src}, Lookup: lookup})
	c := ts.client(t)
	tests := []struct {
		namespace string
		want      verdictv1.Result
	}{
		{"shop", verdictv1.Result_RESULT_PASS},
		{"dev", verdictv1.Result_RESULT_FAIL},
		{"unknown", verdictv1.Result_RESULT_FAIL},
	}
	for _, tt := range tests {
		got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", tt.namespace, "nginx", nil)})
		if err != nil {
			t.Fatalf("Evaluate(Pod in %s): %v", tt.namespace, err)
		}
		if len(got.GetResults()) != 1 || got.GetResults()[0].GetResult() != tt.want {
			t.Errorf("Evaluate(Pod in %s) = %v, want one %v", tt.namespace, got.GetResults(), tt.want)
		}
	}
}

// celResources is a kyvernocel.Resources holding ConfigMaps by
// namespace/name.
type celResources struct{ objects map[string]map[string]any }

func (r celResources) GetResource(_ context.Context, _, resource, namespace, name string) (map[string]any, error) {
	if o, ok := r.objects[namespace+"/"+name]; ok && resource == "configmaps" {
		return o, nil
	}
	return nil, fmt.Errorf("%s %s/%s: %w", resource, namespace, name, engine.ErrNotFound)
}

func (r celResources) ListResources(context.Context, string, string, string, map[string]string) (map[string]any, error) {
	return nil, errors.New("not listed")
}

func (r celResources) PostResource(context.Context, string, string, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("not created")
}

// TestValidatingPolicyCELData: resource.Get reads Options.CELData (the
// cluster through kubelookup in a cluster), also while the evaluation
// holds a slot (MaxEvaluations).
func TestValidatingPolicyCELData(t *testing.T) {
	policy := strings.Replace(validatingPolicy("allowed-images", "[Deny]"),
		`"'team' in object.metadata.labels"`,
		`"object.spec.containers.all(c, c.image in resource.Get('v1', 'configmaps', object.metadata.namespace, 'allowed').data.images.split(','))"`, 1)
	_, src := policyFolder(t, map[string]string{"policy.yaml": policy})
	data := kyvernocel.Sources{Resources: celResources{map[string]map[string]any{
		"shop/allowed": {"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"images": "nginx,redis"}},
	}}}
	ts := startServer(t, Options{Sources: []PolicySource{src}, CELData: data, MaxEvaluations: 2})
	c := ts.client(t)
	tests := []struct {
		namespace, image string
		want             verdictv1.Result
	}{
		{"shop", "nginx", verdictv1.Result_RESULT_PASS},
		{"shop", "busybox", verdictv1.Result_RESULT_FAIL},
		{"dev", "nginx", verdictv1.Result_RESULT_ERROR}, // no ConfigMap in dev
	}
	for _, tt := range tests {
		got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", tt.namespace, tt.image, nil)})
		if err != nil {
			t.Fatalf("Evaluate(%s in %s): %v", tt.image, tt.namespace, err)
		}
		if len(got.GetResults()) != 1 || got.GetResults()[0].GetResult() != tt.want {
			t.Errorf("Evaluate(%s in %s) = %v, want one %v", tt.image, tt.namespace, got.GetResults(), tt.want)
		}
	}
}

// TestValidatingPolicyNameOfClusterPolicy: a ValidatingPolicy with the
// name of a ClusterPolicy is not served (requests and reports name
// policies by namespace and name); the ClusterPolicy is, and the
// ValidatingPolicy is a duplicate_policy source error.
func TestValidatingPolicyNameOfClusterPolicy(t *testing.T) {
	_, src := policyFolder(t, map[string]string{
		"team.yaml": teamLabelPolicy,
		"vpol.yaml": validatingPolicy("require-team-label", "[Deny]"),
	})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	resp, err := c.ListPolicies(t.Context(), &verdictv1.ListPoliciesRequest{})
	if err != nil {
		t.Fatalf("ListPolicies: %v", err)
	}
	var kinds []string
	for _, p := range resp.GetPolicies() {
		kinds = append(kinds, p.GetKind()+" "+p.GetName())
	}
	if diff := cmp.Diff([]string{"ClusterPolicy require-team-label"}, kinds); diff != "" {
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
	got, err := c.GetPolicy(t.Context(), &verdictv1.GetPolicyRequest{Name: "require-team-label"})
	if err != nil || got.GetPolicy().GetKind() != "ClusterPolicy" {
		t.Errorf("GetPolicy(require-team-label) = %v, %v; want the ClusterPolicy", got.GetPolicy(), err)
	}
}

// TestValidatePoliciesValidationsLimit: the validations of a
// ValidatingPolicy count as its rules for MaxRequestPolicyRules, at the
// limit and over it.
func TestValidatePoliciesValidationsLimit(t *testing.T) {
	ts := startServer(t, Options{MaxRequestPolicyRules: 2})
	c := ts.client(t)
	waitServing(t, dial(t, ts.addr))
	withValidations := func(n int) string {
		p := validatingPolicy("many", "[Deny]")
		v := "  - expression: \"true\"\n"
		return p + strings.Repeat(v, n-1)
	}
	tests := []struct {
		validations int
		wantCodes   []string
	}{
		{2, nil},
		{3, []string{string(CodeLimitExceeded) + " at spec.validations"}},
	}
	for _, tt := range tests {
		resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(withValidations(tt.validations))}})
		if err != nil {
			t.Fatalf("ValidatePolicies: %v", err)
		}
		var got []string
		for _, e := range resp.GetDocuments()[0].GetErrors() {
			got = append(got, e.GetCode()+" at "+e.GetPath())
		}
		if diff := cmp.Diff(tt.wantCodes, got); diff != "" {
			t.Errorf("ValidatePolicies(%d validations, limit 2) (-want +got):\n%s", tt.validations, diff)
		}
	}
}

// TestValidatingPolicyRequestResource: the request's resource is what the
// resourceRules of a ValidatingPolicy match and what CEL sees as
// request.resource; without it the server guesses the plural from the kind
// ("octopuses"), which is not this CRD's.
func TestValidatingPolicyRequestResource(t *testing.T) {
	policy := `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: octopus-arms
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - {apiGroups: [sea.example.com], apiVersions: [v1], operations: [CREATE], resources: [octopi]}
  validations:
  - expression: "request.resource.resource == 'octopi' && object.spec.arms == 8"
    message: an octopus has 8 arms
`
	_, src := policyFolder(t, map[string]string{"policy.yaml": policy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	obj := []byte(`{"apiVersion":"sea.example.com/v1","kind":"Octopus","metadata":{"name":"o","namespace":"sea"},"spec":{"arms":7}}`)
	tests := []struct {
		name     string
		resource *verdictv1.GroupVersionResource
		want     []result
	}{
		{"with the resource", &verdictv1.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "octopi"},
			[]result{{"octopus-arms", "", verdictv1.Result_RESULT_FAIL, true}}},
		{"without it", nil, nil},
	}
	for _, tt := range tests {
		got, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: obj, Resource: tt.resource})
		if err != nil {
			t.Fatalf("Evaluate(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, resultsOf(got)); diff != "" {
			t.Errorf("Evaluate(Octopus %s) results (-want +got):\n%s", tt.name, diff)
		}
	}
}
