package kubesource_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/kubesource"
)

// newFake returns a fake dynamic client holding objs.
func newFake(objs ...runtime.Object) *fake.FakeDynamicClient {
	kinds := map[schema.GroupVersionResource]string{
		kubesource.ClusterPolicies:  "ClusterPolicyList",
		kubesource.Policies:         "PolicyList",
		kubesource.PolicyExceptions: "PolicyExceptionList",

		kubesource.ValidatingAdmissionPolicies:       "ValidatingAdmissionPolicyList",
		kubesource.ValidatingAdmissionPolicyBindings: "ValidatingAdmissionPolicyBindingList",
	}
	for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
		for gvr, list := range map[schema.GroupVersionResource]string{
			kubesource.ValidatingPolicies:           "ValidatingPolicyList",
			kubesource.NamespacedValidatingPolicies: "NamespacedValidatingPolicyList",
			kubesource.CELPolicyExceptions:          "PolicyExceptionList",
			kubesource.MutatingPolicies:             "MutatingPolicyList",
			kubesource.NamespacedMutatingPolicies:   "NamespacedMutatingPolicyList",

			kubesource.ImageValidatingPolicies:           "ImageValidatingPolicyList",
			kubesource.NamespacedImageValidatingPolicies: "NamespacedImageValidatingPolicyList",
			kubesource.GeneratingPolicies:                "GeneratingPolicyList",
			kubesource.NamespacedGeneratingPolicies:      "NamespacedGeneratingPolicyList",
			kubesource.DeletingPolicies:                  "DeletingPolicyList",
			kubesource.NamespacedDeletingPolicies:        "NamespacedDeletingPolicyList",
		} {
			gvr.Version = v
			kinds[gvr] = list
		}
	}
	return fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
}

// object decodes a YAML object.
func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A ClusterPolicy as the API server returns it: with the fields it
// maintains, a status, and kubectl's last-applied annotation.
const clusterPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team-label
  uid: 0b6e2c1a-1111-2222-3333-444455556666
  resourceVersion: "1234"
  generation: 3
  creationTimestamp: "2025-01-01T00:00:00Z"
  labels: {set: baseline}
  annotations:
    policies.kyverno.io/severity: medium
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"kyverno.io/v1"}'
  managedFields:
  - manager: kubectl
    operation: Apply
spec:
  validationFailureAction: Enforce
  rules:
  - name: check-team
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "The label team is required."
      pattern:
        metadata:
          labels:
            team: "?*"
status:
  ready: true
  conditions: [{type: Ready, status: "True"}]
`

const namespacedPolicy = `apiVersion: kyverno.io/v1
kind: Policy
metadata:
  name: no-latest
  namespace: shop
  resourceVersion: "99"
spec:
  validationFailureAction: Enforce
  rules:
  - name: no-latest
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "An image tag other than latest is required."
      pattern:
        spec:
          containers:
          - image: "!*:latest"
`

const exception = `apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: allow-web
  namespace: shop
  resourceVersion: "7"
spec:
  exceptions:
  - policyName: require-team-label
    ruleNames: [check-team]
  match:
    any:
    - resources:
        kinds: [Pod]
        names: [web]
`

// recorder collects the snapshots of a source.
type recorder struct {
	mu    sync.Mutex
	snaps []server.Snapshot
	ch    chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 100)} }

func (r *recorder) update(s server.Snapshot) {
	r.mu.Lock()
	r.snaps = append(r.snaps, s)
	r.mu.Unlock()
	r.ch <- struct{}{}
}

// next waits for the next snapshot.
func (r *recorder) next(t *testing.T) server.Snapshot {
	t.Helper()
	select {
	case <-r.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot after 10s")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snaps[len(r.snaps)-1]
}

// runSource runs src until the test ends and returns a channel with Run's
// error.
func runSource(t *testing.T, src server.PolicySource, update func(server.Snapshot)) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- src.Run(ctx, update) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run() = %v after cancel, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run() did not return 10s after cancel")
		}
	})
	return errc
}

// docs summarizes a snapshot: origin → decoded document.
func docs(t *testing.T, s server.Snapshot) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, d := range s.Documents {
		var m map[string]any
		if err := json.Unmarshal(d.JSON, &m); err != nil {
			t.Fatalf("document %s: %v", d.Origin, err)
		}
		out[d.Origin] = m
	}
	return out
}

func origins(s server.Snapshot) []string {
	var out []string
	for _, d := range s.Documents {
		out = append(out, d.Origin)
	}
	return out
}

func TestSnapshots(t *testing.T) {
	dc := newFake(object(t, clusterPolicy), object(t, namespacedPolicy))
	src, err := kubesource.New(kubesource.Options{Client: dc, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	runSource(t, src, rec.update)

	first := rec.next(t)
	wantDoc := map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata": map[string]any{
			"name":        "require-team-label",
			"labels":      map[string]any{"set": "baseline"},
			"annotations": map[string]any{"policies.kyverno.io/severity": "medium"},
		},
		"spec": object(t, clusterPolicy).Object["spec"],
	}
	if diff := cmp.Diff(wantDoc, docs(t, first)["kubernetes:ClusterPolicy/require-team-label"]); diff != "" {
		t.Errorf("first snapshot: ClusterPolicy document mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kubernetes:ClusterPolicy/require-team-label", "kubernetes:Policy/shop/no-latest"}, origins(first)); diff != "" {
		t.Errorf("first snapshot origins mismatch (-want +got):\n%s", diff)
	}

	ctx := t.Context()
	cp := dc.Resource(kubesource.ClusterPolicies)
	second := object(t, clusterPolicy)
	second.SetName("a-second-policy")
	if _, err := cp.Create(ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kubernetes:ClusterPolicy/a-second-policy", "kubernetes:ClusterPolicy/require-team-label", "kubernetes:Policy/shop/no-latest"}, origins(rec.next(t))); diff != "" {
		t.Errorf("after create: origins mismatch (-want +got):\n%s", diff)
	}

	if err := dc.Resource(kubesource.Policies).Namespace("shop").Delete(ctx, "no-latest", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kubernetes:ClusterPolicy/a-second-policy", "kubernetes:ClusterPolicy/require-team-label"}, origins(rec.next(t))); diff != "" {
		t.Errorf("after delete: origins mismatch (-want +got):\n%s", diff)
	}

	upd := object(t, clusterPolicy)
	upd.SetLabels(map[string]string{"set": "restricted"})
	if _, err := cp.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := docs(t, rec.next(t))["kubernetes:ClusterPolicy/require-team-label"]["metadata"].(map[string]any)["labels"]
	if diff := cmp.Diff(map[string]any{"set": "restricted"}, got); diff != "" {
		t.Errorf("after update: labels mismatch (-want +got):\n%s", diff)
	}
}

// TestStatusUpdateKeepsDocument checks that a change the API server makes
// (status, resourceVersion) gives a snapshot with the same document bytes,
// so the server's cache does not compile the policy again.
func TestStatusUpdateKeepsDocument(t *testing.T) {
	dc := newFake(object(t, clusterPolicy))
	src, err := kubesource.New(kubesource.Options{Client: dc, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	runSource(t, src, rec.update)
	before := rec.next(t)

	u := object(t, clusterPolicy)
	u.SetResourceVersion("5678")
	u.Object["status"] = map[string]any{"ready": false}
	if _, err := dc.Resource(kubesource.ClusterPolicies).Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := rec.next(t)
	if len(before.Documents) != 1 || len(after.Documents) != 1 {
		t.Fatalf("snapshots hold %d and %d documents, want 1", len(before.Documents), len(after.Documents))
	}
	if string(before.Documents[0].JSON) != string(after.Documents[0].JSON) {
		t.Errorf("document changed with status:\nbefore %s\nafter  %s", before.Documents[0].JSON, after.Documents[0].JSON)
	}
}

func TestNamespace(t *testing.T) {
	other := object(t, namespacedPolicy)
	other.SetNamespace("other")
	dc := newFake(object(t, clusterPolicy), object(t, namespacedPolicy), other)
	src, err := kubesource.New(kubesource.Options{Client: dc, Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	runSource(t, src, rec.update)
	if diff := cmp.Diff([]string{"kubernetes:ClusterPolicy/require-team-label", "kubernetes:Policy/shop/no-latest"}, origins(rec.next(t))); diff != "" {
		t.Errorf("origins mismatch (-want +got):\n%s", diff)
	}
}

func TestRunErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "kyverno.io", Resource: "clusterpolicies"}
	tests := []struct {
		name     string
		resource string
		err      error
		wantIs   func(error) bool
	}{
		{name: "CRD not installed", resource: "clusterpolicies", err: apierrors.NewNotFound(gr, ""), wantIs: apierrors.IsNotFound},
		{name: "no RBAC for policies", resource: "policies", err: apierrors.NewForbidden(gr, "", errors.New("no")), wantIs: apierrors.IsForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := newFake()
			dc.PrependReactor("list", tt.resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, tt.err
			})
			src, err := kubesource.New(kubesource.Options{Client: dc})
			if err != nil {
				t.Fatal(err)
			}
			called := false
			err = src.Run(t.Context(), func(server.Snapshot) { called = true })
			if err == nil || !tt.wantIs(err) {
				t.Errorf("Run() = %v, want an error wrapping %v", err, tt.err)
			}
			if called {
				t.Error("Run() reported a snapshot before failing")
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := kubesource.New(kubesource.Options{}); err == nil {
		t.Error("New(no client) = nil error, want one")
	}
}

func TestNewClient(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: one
  context: {cluster: c, user: u}
- name: two
  context: {cluster: c, user: u}
current-context: one
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kubesource.NewClient(kubeconfig, "", false); err != nil {
		t.Errorf("NewClient(%s) = %v", kubeconfig, err)
	}
	if _, err := kubesource.NewClient(kubeconfig, "two", false); err != nil {
		t.Errorf("NewClient(%s, two) = %v", kubeconfig, err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		name        string
		kubeconfig  string
		kubeContext string
		inCluster   bool
	}{
		{name: "neither"},
		{name: "both", kubeconfig: kubeconfig, inCluster: true},
		{name: "missing file", kubeconfig: filepath.Join(dir, "missing")},
		{name: "unknown context", kubeconfig: kubeconfig, kubeContext: "three"},
		{name: "in-cluster outside a cluster", inCluster: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := kubesource.NewClient(tt.kubeconfig, tt.kubeContext, tt.inCluster); err == nil {
				t.Errorf("NewClient(%q, %q, %v) = nil error, want one", tt.kubeconfig, tt.kubeContext, tt.inCluster)
			}
		})
	}
}

// TestServerWithKubernetesSource runs a decision server fed by the source
// and evaluates through it: a policy created in the cluster is enforced, a
// policy that does not compile is listed with its error, and a deleted
// policy no longer applies.
func TestServerWithKubernetesSource(t *testing.T) {
	dc := newFake(object(t, clusterPolicy))
	src, err := kubesource.New(kubesource.Options{Client: dc, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := servertest.Dial(t, servertest.Start(t, server.Options{Sources: []server.PolicySource{src}}), client.Options{WaitForReady: true})

	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:latest"}}},
	}
	decision := func() string {
		resp, err := c.EvaluateResource(t.Context(), pod)
		if err != nil {
			t.Fatalf("EvaluateResource() = %v", err)
		}
		var s string
		for _, r := range resp.GetResults() {
			s += r.GetPolicy() + ":" + r.GetResult().String() + " "
		}
		return s
	}
	eventually := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := decision()
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("decision = %q, want %q", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	eventually("require-team-label:RESULT_FAIL ")

	if _, err := dc.Resource(kubesource.Policies).Namespace("shop").Create(t.Context(), object(t, namespacedPolicy), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("require-team-label:RESULT_FAIL no-latest:RESULT_FAIL ")

	bad := object(t, clusterPolicy)
	bad.SetName("bad")
	rules, _, _ := unstructured.NestedSlice(bad.Object, "spec", "rules")
	rule := rules[0].(map[string]any)
	rule["validate"].(map[string]any)["message"] = "{{ nope( }}"
	_ = unstructured.SetNestedSlice(bad.Object, rules, "spec", "rules")
	if _, err := dc.Resource(kubesource.ClusterPolicies).Create(t.Context(), bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.GetPolicy(t.Context(), "", "bad")
		if err == nil {
			if len(resp.GetPolicy().GetErrors()) == 0 || resp.GetPolicy().GetReady() {
				t.Errorf("GetPolicy(bad) = ready %v, errors %v; want not ready, with errors", resp.GetPolicy().GetReady(), resp.GetPolicy().GetErrors())
			}
			if got, want := resp.GetPolicy().GetSource(), "kubernetes:ClusterPolicy/bad"; got != want {
				t.Errorf("GetPolicy(bad) source = %q, want %q", got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetPolicy(bad) = %v after 10s", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	if _, err := dc.Resource(kubesource.PolicyExceptions).Namespace("shop").Create(t.Context(), object(t, exception), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("require-team-label:RESULT_SKIP no-latest:RESULT_FAIL ")

	if err := dc.Resource(kubesource.ClusterPolicies).Delete(t.Context(), "require-team-label", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("no-latest:RESULT_FAIL ")
}

func TestExceptions(t *testing.T) {
	other := object(t, exception)
	other.SetNamespace("other")
	tests := []struct {
		name        string
		opts        kubesource.Options
		notServed   bool
		wantOrigins []string
	}{
		{
			name:        "read in every namespace",
			wantOrigins: []string{"kubernetes:ClusterPolicy/require-team-label", "kubernetes:PolicyException/other/allow-web", "kubernetes:PolicyException/shop/allow-web"},
		},
		{
			name:        "one namespace",
			opts:        kubesource.Options{ExceptionNamespace: "shop"},
			wantOrigins: []string{"kubernetes:ClusterPolicy/require-team-label", "kubernetes:PolicyException/shop/allow-web"},
		},
		{
			name:        "disabled",
			opts:        kubesource.Options{DisableExceptions: true},
			wantOrigins: []string{"kubernetes:ClusterPolicy/require-team-label"},
		},
		{
			name:        "not served by the cluster",
			notServed:   true,
			wantOrigins: []string{"kubernetes:ClusterPolicy/require-team-label"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := newFake(object(t, clusterPolicy), object(t, exception), other)
			if tt.notServed {
				dc.PrependReactor("list", "policyexceptions", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "kyverno.io", Resource: "policyexceptions"}, "")
				})
			}
			tt.opts.Client = dc
			src, err := kubesource.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			runSource(t, src, rec.update)
			if diff := cmp.Diff(tt.wantOrigins, origins(rec.next(t))); diff != "" {
				t.Errorf("origins mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A ValidatingPolicy that denies a Pod without the label team, as the API
// server returns it.
const validatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: deny-team
  resourceVersion: "12"
  generation: 1
spec:
  validationActions: [Deny]
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
status:
  conditionStatus: {ready: true}
`

const namespacedValidatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata:
  name: ns-team
  namespace: shop
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  validations:
  - expression: "'team' in object.metadata.labels"
`

// celException has the namespace and name of exception, in the other
// group.
const celException = `apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: allow-web
  namespace: shop
spec:
  policyRefs:
  - name: deny-team
    kind: ValidatingPolicy
  matchConditions:
  - name: web
    expression: "object.metadata.name == 'web'"
`

// TestValidatingPolicies checks that the policies.kyverno.io kinds are
// read next to the kyverno.io ones, with Namespace limiting the
// NamespacedValidatingPolicies and the exception options applying to the
// PolicyExceptions of both groups.
func TestValidatingPolicies(t *testing.T) {
	otherNVP := object(t, namespacedValidatingPolicy)
	otherNVP.SetNamespace("other")
	otherException := object(t, celException)
	otherException.SetNamespace("other")
	objs := func() []runtime.Object {
		return []runtime.Object{
			object(t, validatingPolicy), object(t, namespacedValidatingPolicy), otherNVP,
			object(t, exception), object(t, celException), otherException,
		}
	}
	const (
		vp          = "kubernetes:ValidatingPolicy/deny-team"
		nvpShop     = "kubernetes:NamespacedValidatingPolicy/shop/ns-team"
		nvpOther    = "kubernetes:NamespacedValidatingPolicy/other/ns-team"
		kyvernoExc  = "kubernetes:PolicyException/shop/allow-web"
		celExcOther = "kubernetes:PolicyException.policies.kyverno.io/other/allow-web"
		celExcShop  = "kubernetes:PolicyException.policies.kyverno.io/shop/allow-web"
	)
	tests := []struct {
		name        string
		opts        kubesource.Options
		notServed   string // a resource the cluster does not serve
		wantOrigins []string
	}{
		{
			name:        "every namespace",
			wantOrigins: []string{nvpOther, nvpShop, kyvernoExc, celExcOther, celExcShop, vp},
		},
		{
			name:        "one namespace",
			opts:        kubesource.Options{Namespace: "shop"},
			wantOrigins: []string{nvpShop, kyvernoExc, celExcOther, celExcShop, vp},
		},
		{
			name:        "exceptions of one namespace",
			opts:        kubesource.Options{ExceptionNamespace: "shop"},
			wantOrigins: []string{nvpOther, nvpShop, kyvernoExc, celExcShop, vp},
		},
		{
			name:        "exceptions disabled",
			opts:        kubesource.Options{DisableExceptions: true},
			wantOrigins: []string{nvpOther, nvpShop, vp},
		},
		{
			name:        "ValidatingPolicies not served",
			notServed:   "validatingpolicies",
			wantOrigins: []string{nvpOther, nvpShop, kyvernoExc, celExcOther, celExcShop},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := newFake(objs()...)
			if tt.notServed != "" {
				dc.PrependReactor("list", tt.notServed, func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "policies.kyverno.io", Resource: tt.notServed}, "")
				})
			}
			tt.opts.Client = dc
			tt.opts.Debounce = 10 * time.Millisecond
			src, err := kubesource.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			runSource(t, src, rec.update)
			if diff := cmp.Diff(tt.wantOrigins, origins(rec.next(t))); diff != "" {
				t.Errorf("origins mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidatingPolicyDocument checks the document of a ValidatingPolicy:
// the fields a user writes, without status and the API server's fields.
func TestValidatingPolicyDocument(t *testing.T) {
	dc := newFake(object(t, validatingPolicy))
	src, err := kubesource.New(kubesource.Options{Client: dc})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	runSource(t, src, rec.update)
	want := map[string]any{
		"apiVersion": "policies.kyverno.io/v1",
		"kind":       "ValidatingPolicy",
		"metadata":   map[string]any{"name": "deny-team"},
		"spec":       object(t, validatingPolicy).Object["spec"],
	}
	if diff := cmp.Diff(want, docs(t, rec.next(t))["kubernetes:ValidatingPolicy/deny-team"]); diff != "" {
		t.Errorf("ValidatingPolicy document mismatch (-want +got):\n%s", diff)
	}
}

// TestValidatingPolicyOlderVersion checks that a cluster whose CRD does not
// serve v1 (Kyverno before 1.17) is read at v1beta1.
func TestValidatingPolicyOlderVersion(t *testing.T) {
	old := object(t, validatingPolicy)
	old.SetAPIVersion("policies.kyverno.io/v1beta1")
	dc := newFake(old)
	dc.PrependReactor("list", "validatingpolicies", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Version != "v1" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "policies.kyverno.io", Resource: "validatingpolicies"}, "")
	})
	src, err := kubesource.New(kubesource.Options{Client: dc})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	runSource(t, src, rec.update)
	got := docs(t, rec.next(t))["kubernetes:ValidatingPolicy/deny-team"]["apiVersion"]
	if got != "policies.kyverno.io/v1beta1" {
		t.Errorf("ValidatingPolicy apiVersion = %v, want policies.kyverno.io/v1beta1", got)
	}
}

// TestServerWithValidatingPolicies runs a decision server fed by the
// source: a ValidatingPolicy created in the cluster fails a Pod without the
// label team, a policies.kyverno.io PolicyException turns it into a skip,
// and a deleted policy no longer applies.
func TestServerWithValidatingPolicies(t *testing.T) {
	dc := newFake()
	src, err := kubesource.New(kubesource.Options{Client: dc, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := servertest.Dial(t, servertest.Start(t, server.Options{Sources: []server.PolicySource{src}}), client.Options{WaitForReady: true})

	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
	eventually := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := c.EvaluateResource(t.Context(), pod)
			if err != nil {
				t.Fatalf("EvaluateResource() = %v", err)
			}
			var got string
			for _, r := range resp.GetResults() {
				got += r.GetPolicy() + ":" + r.GetResult().String() + " "
			}
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("decision = %q, want %q (%v)", got, want, resp.GetResults())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	vp := dc.Resource(kubesource.ValidatingPolicies)
	if _, err := vp.Create(t.Context(), object(t, validatingPolicy), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("deny-team:RESULT_FAIL ")

	if _, err := dc.Resource(kubesource.CELPolicyExceptions).Namespace("shop").Create(t.Context(), object(t, celException), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("deny-team:RESULT_SKIP ")

	if err := vp.Delete(t.Context(), "deny-team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("")
}
