//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/deploy"
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

// refreshConfigMapsPolicy labels, when the ConfigMap trigger changes, the
// ConfigMaps of the cluster labelled refresh: "true" with the trigger's
// namespace and name (mutate-existing only: admission disabled).
const refreshConfigMapsPolicy = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: refresh-configmaps
spec:
  evaluation:
    admission:
      enabled: false
    mutateExisting:
      enabled: true
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
      resourceNames: [trigger]
  targetMatchConstraints:
    objectSelector:
      matchLabels:
        refresh: "true"
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  variables:
  - name: trigger
    expression: request.object.metadata.namespace + "." + request.object.metadata.name
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"refreshed-by": variables.trigger}}}'
`

// TestE2EMutateExisting deploys overlays/dev and checks, against a real
// API server, a MutatingPolicy with mutateExisting: after a scan (the
// scanner replays the policy's triggers and applies the target patches
// the decision server computes from the cluster), the ConfigMaps its
// targetMatchConstraints select carry the label its mutation adds, with
// the trigger's name, and the others do not; the trigger itself is not
// patched.
func TestE2EMutateExisting(t *testing.T) {
	d := deployDev(t, nsPurposePolicy)
	ctx := t.Context()
	for _, ns := range []string{"mpolx-a", "mpolx-b"} {
		if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns, Labels: map[string]string{"purpose": "production"},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Namespace %s: %v", ns, err)
		}
	}
	for _, cm := range []struct{ ns, name, refresh string }{
		{"mpolx-a", "trigger", ""}, {"mpolx-a", "one", "true"}, {"mpolx-b", "two", "true"}, {"mpolx-b", "other", "false"},
	} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name, Namespace: cm.ns}, Data: map[string]string{"k": "v"}}
		if cm.refresh != "" {
			obj.Labels = map[string]string{"refresh": cm.refresh}
		}
		if _, err := d.cs.CoreV1().ConfigMaps(cm.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ConfigMap %s/%s: %v", cm.ns, cm.name, err)
		}
	}
	d.applyPolicies(t, refreshConfigMapsPolicy)
	waitServed(t, d, "refresh-configmaps")
	for shard := 0; shard < 2; shard++ {
		args, err := deploy.Args(d.overlay, "scanner", map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(shard)})
		if err != nil {
			t.Fatal(err)
		}
		args = deploy.LocalArgs(args, d.kubeconfig, map[string]string{"server": d.serverAddr, "report-writer": d.writerAddr})
		var out, errOut bytes.Buffer
		if code := run(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("verdict %s = exit %d, want 0\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	want := map[string]string{"mpolx-a/trigger": "", "mpolx-a/one": "mpolx-a.trigger", "mpolx-b/two": "mpolx-a.trigger", "mpolx-b/other": ""}
	for key, label := range want {
		ns, name, _ := strings.Cut(key, "/")
		cm, err := d.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get ConfigMap %s: %v", key, err)
		}
		if got := cm.Labels["refreshed-by"]; got != label {
			t.Errorf("ConfigMap %s label refreshed-by = %q, want %q", key, got, label)
		}
	}
}
