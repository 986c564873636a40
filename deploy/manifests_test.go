package deploy

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rendered renders every kustomization once per test binary.
var rendered = sync.OnceValues(func() (map[string][]*unstructured.Unstructured, error) {
	out := map[string][]*unstructured.Unstructured{}
	for _, k := range Kustomizations {
		objs, err := Render(k)
		if err != nil {
			return nil, err
		}
		out[k] = objs
	}
	return out, nil
})

func renderAll(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	all, err := rendered()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return all
}

func kindCounts(objs []*unstructured.Unstructured) map[string]int {
	m := map[string]int{}
	for _, o := range objs {
		m[o.GetKind()]++
	}
	return m
}

// TestRenderKinds checks what each kustomization installs.
func TestRenderKinds(t *testing.T) {
	common := map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 19, "ServiceAccount": 4,
		"ClusterRole": 8, "ClusterRoleBinding": 4, "Role": 1, "RoleBinding": 1,
		"Deployment": 2, "StatefulSet": 1, "Service": 3, "CronJob": 1, "NetworkPolicy": 4,
		"ValidatingWebhookConfiguration": 2, "MutatingWebhookConfiguration": 1,
	}
	with := func(extra map[string]int) map[string]int {
		m := map[string]int{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		give string
		want map[string]int
	}{
		{"base", with(map[string]int{"HorizontalPodAutoscaler": 2, "PodDisruptionBudget": 2})},
		{"overlays/dev", common},
		{"overlays/ha", with(map[string]int{"HorizontalPodAutoscaler": 2, "PodDisruptionBudget": 2, "Issuer": 1, "Certificate": 1})},
		{"overlays/cleanup", with(map[string]int{"HorizontalPodAutoscaler": 2, "PodDisruptionBudget": 2,
			"ServiceAccount": 5, "ClusterRole": 10, "ClusterRoleBinding": 5, "Deployment": 3})},
		{"scan-job", map[string]int{"Job": 1}},
	}
	all := renderAll(t)
	for _, tt := range tests {
		objs := all[tt.give]
		t.Logf("%s: %d objects", tt.give, len(objs))
		if diff := cmp.Diff(tt.want, kindCounts(objs)); diff != "" {
			t.Errorf("Render(%q) kinds (-want +got):\n%s", tt.give, diff)
		}
	}
}

// reportErrs reports each error of a check of the install name.
func reportErrs(t *testing.T, name, check string, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Errorf("%s: %s: %v", name, check, err)
	}
}

// TestStrictDecode decodes every object into its typed Kubernetes struct
// and fails on an unknown kind, an unknown or duplicated field, or a
// value of the wrong type (kubeconform-style).
func TestStrictDecode(t *testing.T) {
	for _, k := range Kustomizations {
		reportErrs(t, k, "CheckStrictDecode", CheckStrictDecode(renderAll(t)[k]))
	}
}

// TestStrictDecodeRejects checks that the strict decoder of
// TestStrictDecode does reject what it should.
func TestStrictDecodeRejects(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{"unknown field", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replica":2}}`},
		{"wrong type", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":"two"}}`},
		{"duplicate field", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"x","name":"y"}}`},
		{"unknown kind", `{"apiVersion":"apps/v1","kind":"Deploymnet","metadata":{"name":"x"}}`},
		{"unknown cert-manager field", `{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"name":"x"},"spec":{"secretNames":"y"}}`},
		{"unknown cert-manager kind", `{"apiVersion":"cert-manager.io/v1","kind":"ClusterIssuer","metadata":{"name":"x"}}`},
	}
	for _, tt := range tests {
		if err := StrictDecode([]byte(tt.give)); err == nil {
			t.Errorf("StrictDecode(%s) = nil error, want an error", tt.name)
		}
	}
}

// TestCRDs validates each CRD as the API server does on create
// (apiextensions validation: structural schemas, versions, names).
func TestCRDs(t *testing.T) {
	reportErrs(t, "base", "CheckCRDs", CheckCRDs(renderAll(t)["base"]))
}

// TestCRDValidationRejects checks that ValidateCRD does reject: a schema
// whose property has no type is not structural.
func TestCRDValidationRejects(t *testing.T) {
	var o *unstructured.Unstructured
	for _, x := range renderAll(t)["base"] {
		if x.GetName() == "policyreports.wgpolicyk8s.io" {
			o = x.DeepCopy()
		}
	}
	if o == nil {
		t.Fatal("no policyreports.wgpolicyk8s.io CRD")
	}
	versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	v := versions[0].(map[string]any)
	if err := unstructured.SetNestedField(v, map[string]any{}, "schema", "openAPIV3Schema", "properties", "summary"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(o.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	errs, err := ValidateCRD(o)
	if err != nil || len(errs) == 0 {
		t.Errorf("ValidateCRD(summary without a type) = %v, %v, want validation errors", errs, err)
	}
}

// TestNamespaced checks that every namespaced object lands in verdict.
func TestNamespaced(t *testing.T) {
	for _, k := range Kustomizations {
		reportErrs(t, k, "CheckNamespaced", CheckNamespaced(renderAll(t)[k], Namespace))
	}
}

// TestPodSecurity checks each workload: the image, non-root, read-only
// root filesystem, no capabilities, RuntimeDefault seccomp, requests and
// limits, and GOMEMLIMIT under the memory limit.
func TestPodSecurity(t *testing.T) {
	for _, k := range Kustomizations {
		reportErrs(t, k, "CheckPodSecurity", CheckPodSecurity(renderAll(t)[k], Image))
	}
}

// TestWebhookPaths checks the webhook configurations of the base and the
// overlays (CheckWebhooks): the paths the proxy serves, failure policies,
// timeouts, the CA's source, the namespaces and kinds never sent.
func TestWebhookPaths(t *testing.T) {
	tests := []struct {
		give string
		want WebhookOptions
	}{
		{"base", WebhookOptions{Namespace: Namespace, CA: CAByHand, FailurePolicy: admissionregistrationv1.Fail}},
		{"overlays/dev", WebhookOptions{Namespace: Namespace, CA: CAByHand, FailurePolicy: admissionregistrationv1.Ignore}},
		{"overlays/ha", WebhookOptions{Namespace: Namespace, CA: CACertManager, FailurePolicy: admissionregistrationv1.Fail}},
	}
	for _, tt := range tests {
		reportErrs(t, tt.give, "CheckWebhooks", CheckWebhooks(renderAll(t)[tt.give], tt.want))
	}
}

// TestWebhookPathsRejects checks that CheckWebhooks does reject: the ha
// overlay judged as an install whose CA is set by hand.
func TestWebhookPathsRejects(t *testing.T) {
	errs := CheckWebhooks(renderAll(t)["overlays/ha"], WebhookOptions{Namespace: Namespace, CA: CAByHand, FailurePolicy: admissionregistrationv1.Fail})
	if len(errs) == 0 {
		t.Errorf("CheckWebhooks(overlays/ha, CA by hand) = no error, want the inject-ca-from annotations named")
	}
}

// TestRBAC checks that each component's ServiceAccount is bound, and that
// no rule grants wildcards, secrets, or escalation verbs.
func TestRBAC(t *testing.T) {
	reportErrs(t, "base", "CheckRBAC", CheckRBAC(renderAll(t)["base"], Namespace))
}

// TestServerRBAC checks that the decision server may list and watch every
// resource its Kubernetes policy source reads.
func TestServerRBAC(t *testing.T) {
	reportErrs(t, "base", "CheckServerRBAC", CheckServerRBAC(renderAll(t)["base"]))
}

func TestExpand(t *testing.T) {
	env := map[string]string{"JOB_COMPLETION_INDEX": "3"}
	tests := []struct {
		give, want string
	}{
		{"--shard=$(JOB_COMPLETION_INDEX)/4", "--shard=3/4"},
		{"--x=$$(JOB_COMPLETION_INDEX)", "--x=$(JOB_COMPLETION_INDEX)"},
		{"plain", "plain"},
		{"$(unclosed", "$(unclosed"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.give, env)
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
	if _, err := Expand("$(MISSING)", env); err == nil {
		t.Errorf("Expand(%q) = nil error, want an error", "$(MISSING)")
	}
}

func TestLocalArgs(t *testing.T) {
	give := []string{"serve", "--in-cluster", "--listen=:50051", "--metrics-listen=:9090", "--log-format=json"}
	tests := []struct {
		name       string
		kubeconfig string
		set        map[string]string
		want       []string
	}{
		{"kubeconfig and loopback", "/tmp/kc", map[string]string{"listen": "127.0.0.1:0", "metrics-listen": ""},
			[]string{"serve", "--kubeconfig=/tmp/kc", "--listen=127.0.0.1:0", "--metrics-listen=", "--log-format=json"}},
		{"no kubeconfig, a new flag", "", map[string]string{"policies": "/p"},
			[]string{"serve", "--listen=:50051", "--metrics-listen=:9090", "--log-format=json", "--policies=/p"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, LocalArgs(give, tt.kubeconfig, tt.set)); diff != "" {
			t.Errorf("LocalArgs(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
}
