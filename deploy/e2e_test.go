//go:build e2e

package deploy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// chartInstalls are the chart's values files the dry run sends, by the
// name the test logs them under (each as helm template renders it).
var chartInstalls = []struct {
	name  string
	files []string
}{
	{"chart", nil},
	{"chart -f values-ha.yaml", []string{"values-ha.yaml"}},
	{"chart -f values-dev.yaml", []string{"values-dev.yaml"}},
}

// renderCharts renders chartInstalls with the helm binary of $VERDICT_HELM
// (make e2e builds it); without it, it says so and returns none.
func renderCharts(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	helm := os.Getenv(HelmEnv)
	if helm == "" {
		t.Logf("$%s is not set (make e2e builds helm and sets it): the chart is not rendered, only the kustomizations are sent", HelmEnv)
		return map[string][]*unstructured.Unstructured{}
	}
	out := map[string][]*unstructured.Unstructured{}
	for _, in := range chartInstalls {
		var files []string
		for _, f := range in.files {
			files = append(files, filepath.Join(ChartDir, f))
		}
		objs, err := RenderChart(t.Context(), helm, ChartDir, Namespace, files, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[in.name] = objs
	}
	return out
}

// notServed are the API groups of objects the harness has no CRDs for
// (cert-manager in overlays/ha); their objects are not sent.
var notServed = map[string]bool{"cert-manager.io": true}

// TestServerDryRun sends every rendered object of every kustomization, and
// of the Helm chart with each of its values files, to a real
// kube-apiserver with server-side apply and dryRun=All, so that the
// API server's own validation, defaulting and admission (CRD schemas,
// webhook configurations and their CEL matchConditions, RBAC
// aggregation, Pod Security) judge them. Then it applies the CRDs for
// real, waits for them to be established, and creates a ClusterPolicy, a
// PolicyException and the reports through them.
func TestServerDryRun(t *testing.T) {
	c := e2e.Start(t, e2e.Options{})
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)

	all := renderCharts(t)
	installs := []string{}
	for _, in := range chartInstalls {
		if all[in.name] != nil {
			installs = append(installs, in.name)
		}
	}
	for _, k := range Kustomizations {
		objs, err := Render(k)
		if err != nil {
			t.Fatal(err)
		}
		all[k] = objs
		installs = append(installs, k)
	}

	// Namespaced objects need their namespace to exist even in a dry run:
	// the rendered one, with its Pod Security labels (restricted). The pods
	// below need their ServiceAccounts: those of every install (an overlay
	// such as cleanup adds its own).
	for _, o := range all["base"] {
		if o.GetKind() == "Namespace" {
			if err := Apply(ctx, dyn, mapper, o, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range installs {
		for _, o := range all[k] {
			if o.GetKind() == "ServiceAccount" && o.GetNamespace() == "verdict" {
				if err := Apply(ctx, dyn, mapper, o, false); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	dryRun := func(k string, objs []*unstructured.Unstructured) {
		start := time.Now()
		sent, skipped := 0, 0
		for _, o := range objs {
			if notServed[o.GroupVersionKind().Group] {
				skipped++
				continue
			}
			if err := Apply(ctx, dyn, mapper, o, true); err != nil {
				t.Errorf("%s: dry-run apply %s %s: %v", k, o.GetKind(), o.GetName(), err)
				continue
			}
			sent++
		}
		t.Logf("%s: %d objects accepted by the API server (dry run), %d of groups it does not serve skipped, %v", k, sent, skipped, time.Since(start).Round(time.Millisecond))
	}
	// The base, the overlays, the Job and the chart all dry-run before any
	// CRD exists: a CRD's dry run checks its schema without serving it.
	for _, k := range installs {
		dryRun(k, all[k])
	}

	// Each workload's pod as the Job or ReplicaSet controller would create
	// it: the PodSecurity admission of the namespace (enforce: restricted)
	// judges it.
	for _, k := range installs {
		ws, err := Workloads(all[k])
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: w.Name + "-", Namespace: "verdict"},
				Spec:       *w.Pod.DeepCopy(),
			}
			for _, c := range w.VolumeClaims {
				pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c + "-" + w.Name + "-0"},
				}})
			}
			_, err := cs.CoreV1().Pods("verdict").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Errorf("%s: dry-run create of the pod of %s %s: %v", k, w.Kind, w.Name, err)
			}
		}
	}

	// The check has teeth: a pod without the security settings is refused.
	bare := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "bare-", Namespace: "verdict"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "ghcr.io/verdict-policy/verdict:v0.1.0"}}},
	}
	if _, err := cs.CoreV1().Pods("verdict").Create(ctx, bare, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("dry-run create of a pod without securityContext in namespace verdict = %v, want Forbidden (Pod Security restricted)", err)
	}

	// The CRDs for real, then objects of each kind through them.
	for _, o := range all["base"] {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := Apply(ctx, dyn, mapper, o, false); err != nil {
			t.Fatalf("apply CRD %s: %v", o.GetName(), err)
		}
		waitEstablished(t, dyn, o.GetName())
	}
	cached.Invalidate()
	mapper.Reset()
	for _, doc := range []string{clusterPolicy, policyException, policyReport, clusterPolicyReport} {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		o := &unstructured.Unstructured{Object: m}
		if err := Apply(ctx, dyn, mapper, o, false); err != nil {
			t.Errorf("apply %s %s through the CRD: %v", o.GetKind(), o.GetName(), err)
		}
	}
	// A policy the schema rejects: the CRDs validate, not only store.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
		"metadata": map[string]any{"name": "bad"},
		"spec":     map[string]any{"validationFailureAction": "Sometimes", "rules": []any{}},
	}}
	if err := Apply(ctx, dyn, mapper, bad, true); !apierrors.IsInvalid(err) {
		t.Errorf("dry-run apply of a ClusterPolicy with validationFailureAction Sometimes = %v, want Invalid", err)
	}
}

func waitEstablished(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}

const clusterPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-ns-purpose-label
spec:
  validationFailureAction: Enforce
  background: true
  rules:
  - name: require-ns-purpose-label
    match:
      any:
      - resources:
          kinds: [Namespace]
    validate:
      message: "You must have label 'purpose' with value 'production' set on all new namespaces."
      pattern:
        metadata:
          labels:
            purpose: production
`

const policyException = `
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: allow-sandbox
  namespace: verdict
spec:
  exceptions:
  - policyName: require-ns-purpose-label
    ruleNames: [require-ns-purpose-label]
  match:
    any:
    - resources:
        kinds: [Namespace]
        names: [sandbox]
`

const policyReport = `
apiVersion: wgpolicyk8s.io/v1alpha2
kind: PolicyReport
metadata:
  name: cpol-require-ns-purpose-label
  namespace: verdict
  labels:
    app.kubernetes.io/managed-by: verdict
results:
- policy: require-ns-purpose-label
  rule: require-ns-purpose-label
  result: pass
  scored: true
  source: kyverno
  timestamp: {seconds: 1700000000, nanos: 0}
  resources:
  - apiVersion: v1
    kind: ConfigMap
    name: c
    namespace: verdict
summary: {pass: 1, fail: 0, warn: 0, error: 0, skip: 0}
`

const clusterPolicyReport = `
apiVersion: wgpolicyk8s.io/v1alpha2
kind: ClusterPolicyReport
metadata:
  name: cpol-require-ns-purpose-label
  labels:
    app.kubernetes.io/managed-by: verdict
results:
- policy: require-ns-purpose-label
  rule: require-ns-purpose-label
  result: fail
  message: "validation error: You must have label 'purpose' with value 'production' set on all new namespaces."
  scored: true
  source: kyverno
  timestamp: {seconds: 1700000000, nanos: 0}
  resources:
  - apiVersion: v1
    kind: Namespace
    name: dev
summary: {pass: 0, fail: 1, warn: 0, error: 0, skip: 0}
`
