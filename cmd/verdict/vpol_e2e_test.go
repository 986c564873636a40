//go:build e2e

package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// denyTeamValidatingPolicy denies Pods without the label team.
const denyTeamValidatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: deny-team
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: the label team is required
`

// exemptPodException exempts the Pods named exempt of namespace vpol-e2e
// from deny-team.
const exemptPodException = `apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: exempt-pod
  namespace: vpol-e2e
spec:
  policyRefs:
  - name: deny-team
    kind: ValidatingPolicy
  matchConditions:
  - name: exempt
    expression: "object.metadata.name == 'exempt'"
`

// TestE2EValidatingPolicy deploys overlays/dev (with the policies.kyverno.io
// CRDs of deploy/crds) and checks, through the API server, the webhook
// proxy and a decision server reading the cluster: a ValidatingPolicy with
// Deny created in the cluster blocks a Pod with its message, a
// policies.kyverno.io PolicyException created afterwards lets the Pod it
// names in, and a ValidatingPolicy whose CEL does not compile is refused
// at creation by /policyvalidate.
func TestE2EValidatingPolicy(t *testing.T) {
	d := deployDev(t, nsPurposePolicy, denyTeamValidatingPolicy)
	ctx := t.Context()
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "vpol-e2e", Labels: map[string]string{"purpose": "production"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Namespace vpol-e2e: %v", err)
	}
	// No controller manager creates it: Pods need it.
	if _, err := d.cs.CoreV1().ServiceAccounts("vpol-e2e").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount vpol-e2e/default: %v", err)
	}
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vpol-e2e", Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
	}
	createPod := func(p *corev1.Pod, dryRun bool) error {
		opts := metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err := d.cs.CoreV1().Pods("vpol-e2e").Create(ctx, p, opts)
		return err
	}

	t.Run("Deny blocks with the message", func(t *testing.T) {
		err := createPod(pod("no-team", map[string]string{"app": "web"}), false)
		for _, want := range []string{"deny-team", "the label team is required"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create Pod no-team = %v, want an error with %q", err, want)
			}
		}
		if err := createPod(pod("with-team", map[string]string{"team": "web"}), false); err != nil {
			t.Errorf("create Pod with-team = %v, want nil", err)
		}
	})

	t.Run("PolicyException lets the Pod in", func(t *testing.T) {
		if err := createPod(pod("exempt", nil), true); err == nil {
			t.Fatal("dry-run create Pod exempt before the exception = nil, want denied")
		}
		d.applyPolicies(t, exemptPodException)
		poll(t, 30*time.Second, "the exception applies", func() error {
			return createPod(pod("exempt", nil), true)
		})
		if err := createPod(pod("exempt", nil), false); err != nil {
			t.Errorf("create Pod exempt = %v, want nil", err)
		}
		if err := createPod(pod("not-exempt", nil), false); err == nil || !strings.Contains(err.Error(), "the label team is required") {
			t.Errorf("create Pod not-exempt = %v, want denied by deny-team", err)
		}
	})

	t.Run("invalid ValidatingPolicy refused", func(t *testing.T) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(strings.Replace(strings.Replace(denyTeamValidatingPolicy,
			"name: deny-team", "name: broken", 1),
			"has(object.metadata.labels) && 'team' in object.metadata.labels", "object.metadata.labels.(", 1)), &obj); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "validatingpolicies"}
		_, err := d.dyn.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `admission webhook "policy-validate.verdict.io" denied the request`) {
			t.Errorf("create ValidatingPolicy broken = %v, want denied by policy-validate.verdict.io", err)
		}
	})
}
