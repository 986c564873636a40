//go:build e2e

package main

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// addTeamMutatingPolicy adds the label team: platform to Pods.
const addTeamMutatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: add-team
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}'
`

// badPatchNamespacedPolicy adds under a field Pods do not have, in
// namespace mpol-fail: the patch does not apply (failurePolicy Fail).
const badPatchNamespacedPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedMutatingPolicy
metadata:
  name: bad-patch
  namespace: mpol-fail
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/spec/missing/field", value: "x"}]'
`

// TestE2EMutatingPolicy deploys overlays/dev (with the policies.kyverno.io
// CRDs of deploy/crds) and checks, through the API server, the webhook
// proxy and a decision server reading the cluster: a MutatingPolicy
// created in the cluster patches a Pod at admission (the stored Pod has
// the label), and its result lands in the mpol-add-team PolicyReport; a
// NamespacedMutatingPolicy whose patch does not apply denies the Pods of
// its namespace with Kyverno's message (failurePolicy Fail); a
// MutatingPolicy whose CEL does not compile is refused at creation by
// /policyvalidate.
func TestE2EMutatingPolicy(t *testing.T) {
	d := deployDev(t, nsPurposePolicy, addTeamMutatingPolicy)
	registerMutatingWebhooks(t, d)
	ctx := t.Context()
	newNamespace := func(name string) {
		t.Helper()
		if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"purpose": "production"},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Namespace %s: %v", name, err)
		}
		// No controller manager creates it: Pods need it.
		if _, err := d.cs.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ServiceAccount %s/default: %v", name, err)
		}
	}
	createPod := func(ns, name string) (*corev1.Pod, error) {
		return d.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}, metav1.CreateOptions{})
	}
	newNamespace("mpol-e2e")

	t.Run("MutatingPolicy patches the Pod", func(t *testing.T) {
		if _, err := createPod("mpol-e2e", "web"); err != nil {
			t.Fatalf("create Pod web: %v", err)
		}
		got, err := d.cs.CoreV1().Pods("mpol-e2e").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get Pod web: %v", err)
		}
		if got.Labels["team"] != "platform" || got.Labels["app"] != "web" {
			t.Errorf("Pod web labels = %v, want team: platform added to app: web", got.Labels)
		}
		pollReport(t, d, "mpol-e2e", "mpol-add-team", map[string]string{"Pod/web": "pass"})
	})

	t.Run("an error under failurePolicy Fail denies", func(t *testing.T) {
		newNamespace("mpol-fail")
		d.applyPolicies(t, badPatchNamespacedPolicy)
		waitServed(t, d, "bad-patch")
		_, err := createPod("mpol-fail", "web")
		for _, want := range []string{"Resource: mpol-fail/web, Kind: Pod, Errors: [Policy bad-patch: ", "/spec/missing/field"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create Pod mpol-fail/web = %v, want an error with %q", err, want)
			}
		}
		if _, err := createPod("mpol-e2e", "other"); err != nil {
			t.Errorf("create Pod mpol-e2e/other = %v, want nil (another namespace)", err)
		}
	})

	t.Run("invalid MutatingPolicy refused", func(t *testing.T) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(strings.Replace(strings.Replace(addTeamMutatingPolicy,
			"name: add-team", "name: broken", 1), `{"team": "platform"}`, `{"team": (}`, 1)), &obj); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "mutatingpolicies"}
		_, err := d.dyn.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `admission webhook "policy-validate.verdict.io" denied the request`) {
			t.Errorf("create MutatingPolicy broken = %v, want denied by policy-validate.verdict.io", err)
		}
	})
}

// registerMutatingWebhooks creates the MutatingWebhookConfiguration of the
// overlay with every webhook pointed at the proxy of d on loopback
// (failing closed, as registerValidatingWebhooks does).
func registerMutatingWebhooks(t *testing.T, d *devDeployment) {
	t.Helper()
	for _, o := range d.objs {
		if o.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &mwc); err != nil {
			t.Fatal(err)
		}
		for i := range mwc.Webhooks {
			cc := &mwc.Webhooks[i].ClientConfig
			url := "https://" + d.proxyAddr + *cc.Service.Path
			cc.Service, cc.URL, cc.CABundle = nil, &url, d.ca
			fp := admissionregistrationv1.Fail
			mwc.Webhooks[i].FailurePolicy = &fp
		}
		mwc.ResourceVersion = ""
		if _, err := d.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), &mwc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
