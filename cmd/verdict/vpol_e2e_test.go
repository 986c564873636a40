//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/deploy"
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

// ownerNamespacedPolicy denies ConfigMaps without the label owner in
// namespace vpol-e2e.
const ownerNamespacedPolicy = `apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata:
  name: require-owner
  namespace: vpol-e2e
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  validations:
  - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
    message: the label owner is required
`

// auditEnvPolicy reports ConfigMaps without the label env (Audit).
const auditEnvPolicy = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: audit-env
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  validations:
  - expression: "has(object.metadata.labels) && 'env' in object.metadata.labels"
    message: the label env is required
`

// TestE2EValidatingPolicy deploys overlays/dev (with the policies.kyverno.io
// CRDs of deploy/crds) and checks, through the API server, the webhook
// proxy and a decision server reading the cluster: a ValidatingPolicy with
// Deny created in the cluster blocks a Pod with its message, a
// policies.kyverno.io PolicyException created afterwards lets the Pod it
// names in, and a ValidatingPolicy whose CEL does not compile is refused
// at creation by /policyvalidate. A NamespacedValidatingPolicy applies in
// its namespace only, and an Audit ValidatingPolicy created after its
// resources lands in the PolicyReports after one scan.
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
	newNamespace := func(name string) {
		t.Helper()
		if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"purpose": "production"},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Namespace %s: %v", name, err)
		}
	}
	createConfigMap := func(ns, name string, labels map[string]string) error {
		_, err := d.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		return err
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

	t.Run("NamespacedValidatingPolicy in its namespace only", func(t *testing.T) {
		newNamespace("vpol-other")
		d.applyPolicies(t, ownerNamespacedPolicy)
		waitServed(t, d, "require-owner")
		err := createConfigMap("vpol-e2e", "no-owner", nil)
		for _, want := range []string{"require-owner", "the label owner is required"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create ConfigMap vpol-e2e/no-owner = %v, want an error with %q", err, want)
			}
		}
		if err := createConfigMap("vpol-other", "no-owner", nil); err != nil {
			t.Errorf("create ConfigMap vpol-other/no-owner = %v, want nil (another namespace)", err)
		}
	})

	t.Run("Audit reported after a scan", func(t *testing.T) {
		newNamespace("vpol-audit")
		for name, labels := range map[string]map[string]string{"with-env": {"env": "prod"}, "no-env": nil} {
			if err := createConfigMap("vpol-audit", name, labels); err != nil {
				t.Fatalf("create ConfigMap vpol-audit/%s: %v", name, err)
			}
		}
		d.applyPolicies(t, auditEnvPolicy)
		waitServed(t, d, "audit-env")
		// Every shard of the manifests' scan CronJob, once, as its pods do.
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
		pollReport(t, d, "vpol-audit", "vpol-audit-env", map[string]string{"ConfigMap/with-env": "pass", "ConfigMap/no-env": "fail"})
	})
}
