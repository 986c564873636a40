package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server/kubesource"
	"github.com/verdict-policy/verdict/webhookproxy"
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
		"Namespace": 1, "CustomResourceDefinition": 9, "ServiceAccount": 4,
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

// certManager are the fields of the cert-manager.io/v1 objects the
// manifests use (cert-manager's types are not a dependency).
type certManagerIssuer struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		SelfSigned *struct{} `json:"selfSigned"`
	} `json:"spec"`
}

type certManagerCertificate struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		SecretName  string   `json:"secretName"`
		CommonName  string   `json:"commonName"`
		DNSNames    []string `json:"dnsNames"`
		Duration    string   `json:"duration"`
		RenewBefore string   `json:"renewBefore"`
		PrivateKey  struct {
			Algorithm      string `json:"algorithm"`
			Size           int    `json:"size"`
			RotationPolicy string `json:"rotationPolicy"`
		} `json:"privateKey"`
		IssuerRef struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"issuerRef"`
	} `json:"spec"`
}

func decodeScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	apiextensionsinstall.Install(s)
	return s
}

// TestStrictDecode decodes every object into its typed Kubernetes struct
// and fails on an unknown kind, an unknown or duplicated field, or a
// value of the wrong type (kubeconform-style).
func TestStrictDecode(t *testing.T) {
	s := decodeScheme()
	ser := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true})
	for _, k := range Kustomizations {
		for _, o := range renderAll(t)[k] {
			b, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("%s: %s %s", k, o.GetKind(), o.GetName())
			if o.GroupVersionKind().Group == "cert-manager.io" {
				var into any
				switch o.GetKind() {
				case "Issuer":
					into = &certManagerIssuer{}
				case "Certificate":
					into = &certManagerCertificate{}
				default:
					t.Errorf("%s: unknown cert-manager kind", id)
					continue
				}
				d := json.NewDecoder(bytes.NewReader(b))
				d.DisallowUnknownFields()
				if err := d.Decode(into); err != nil {
					t.Errorf("%s: decode: %v", id, err)
				}
				continue
			}
			if _, _, err := ser.Decode(b, nil, nil); err != nil {
				t.Errorf("%s: decode: %v", id, err)
			}
		}
	}
}

// TestStrictDecodeRejects checks that the strict decoder of
// TestStrictDecode does reject what it should.
func TestStrictDecodeRejects(t *testing.T) {
	s := decodeScheme()
	ser := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true})
	tests := []struct {
		name string
		give string
	}{
		{"unknown field", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replica":2}}`},
		{"wrong type", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":"two"}}`},
		{"duplicate field", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"x","name":"y"}}`},
		{"unknown kind", `{"apiVersion":"apps/v1","kind":"Deploymnet","metadata":{"name":"x"}}`},
	}
	for _, tt := range tests {
		if _, _, err := ser.Decode([]byte(tt.give), nil, nil); err == nil {
			t.Errorf("Decode(%s) = nil error, want an error", tt.name)
		}
	}
}

// TestCRDs validates each CRD as the API server does on create
// (apiextensions validation: structural schemas, versions, names).
func TestCRDs(t *testing.T) {
	s := decodeScheme()
	objs := renderAll(t)["base"]
	var names []string
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		names = append(names, o.GetName())
		if errs := validateCRD(t, s, o); len(errs) > 0 {
			t.Errorf("ValidateCustomResourceDefinition(%s) = %v, want no error", o.GetName(), errs.ToAggregate())
		}
	}
	want := []string{
		"clusterpolicies.kyverno.io", "clusterpolicyreports.wgpolicyk8s.io", "globalcontextentries.kyverno.io",
		"namespacedvalidatingpolicies.policies.kyverno.io", "policies.kyverno.io",
		"policyexceptions.kyverno.io", "policyexceptions.policies.kyverno.io",
		"policyreports.wgpolicyk8s.io", "validatingpolicies.policies.kyverno.io",
	}
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("CRDs (-want +got):\n%s", diff)
	}
}

// validateCRD runs the API server's CRD validation on o.
func validateCRD(t *testing.T, s *runtime.Scheme, o *unstructured.Unstructured) field.ErrorList {
	t.Helper()
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v1); err != nil {
		t.Fatalf("CRD %s: %v", o.GetName(), err)
	}
	s.Default(&v1)
	var internal apiextensions.CustomResourceDefinition
	if err := s.Convert(&v1, &internal, nil); err != nil {
		t.Fatalf("CRD %s: convert: %v", o.GetName(), err)
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal)
}

// TestCRDValidationRejects checks that validateCRD does reject: a schema
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
	if errs := validateCRD(t, decodeScheme(), o); len(errs) == 0 {
		t.Errorf("ValidateCustomResourceDefinition(summary without a type) = no error, want an error")
	}
}

// TestNamespaced checks that every namespaced object lands in verdict.
func TestNamespaced(t *testing.T) {
	cluster := map[string]bool{
		"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
		"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	}
	for _, k := range Kustomizations {
		for _, o := range renderAll(t)[k] {
			want := "verdict"
			if cluster[o.GetKind()] {
				want = ""
			}
			if got := o.GetNamespace(); got != want {
				t.Errorf("%s: %s %s namespace = %q, want %q", k, o.GetKind(), o.GetName(), got, want)
			}
		}
	}
}

// TestPodSecurity checks each workload: the image, non-root, read-only
// root filesystem, no capabilities, RuntimeDefault seccomp, requests and
// limits, and GOMEMLIMIT under the memory limit.
func TestPodSecurity(t *testing.T) {
	const image = "ghcr.io/verdict-policy/verdict:v0.1.0"
	for _, k := range Kustomizations {
		ws, err := Workloads(renderAll(t)[k])
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) == 0 {
			t.Errorf("%s: no workloads", k)
		}
		for _, w := range ws {
			id := fmt.Sprintf("%s: %s %s container %s", k, w.Kind, w.Name, w.Container.Name)
			c, p := w.Container, w.Pod
			if c.Image != image {
				t.Errorf("%s: image = %q, want %q", id, c.Image, image)
			}
			if w.Component == "" {
				t.Errorf("%s: no %s label", id, ComponentLabel)
			}
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s: no securityContext", id)
				continue
			case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
				t.Errorf("%s: runAsNonRoot not true", id)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s: readOnlyRootFilesystem not true", id)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s: allowPrivilegeEscalation not false", id)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s: capabilities = %+v, want drop [ALL]", id, sc.Capabilities)
			case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
				t.Errorf("%s: seccompProfile not RuntimeDefault", id)
			}
			if psc := p.SecurityContext; psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.SeccompProfile == nil {
				t.Errorf("%s: pod securityContext without a non-zero runAsUser and a seccompProfile", id)
			}
			if p.HostNetwork || p.HostPID || p.HostIPC {
				t.Errorf("%s: host namespaces", id)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("%s: no %s request", id, r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("%s: no %s limit", id, r)
				}
			}
			limit := c.Resources.Limits[corev1.ResourceMemory]
			for _, e := range c.Env {
				if e.Name != "GOMEMLIMIT" {
					continue
				}
				soft, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B"))
				if err != nil {
					t.Errorf("%s: GOMEMLIMIT %q: %v", id, e.Value, err)
				} else if soft.Cmp(limit) >= 0 {
					t.Errorf("%s: GOMEMLIMIT %s not below the memory limit %s", id, e.Value, limit.String())
				}
			}
			if p.ServiceAccountName == "" || p.ServiceAccountName == "default" {
				t.Errorf("%s: serviceAccountName = %q, want the component's own", id, p.ServiceAccountName)
			}
		}
	}
}

// TestWebhookPaths checks that every webhook of the configurations calls
// a path the proxy serves (a real webhookproxy.Handler answers it with 400
// for an empty body, not 404), on the proxy's Service, with a timeout above
// the proxy's --timeout, and that the proxy never sees its own namespace,
// kube-system or Leases.
func TestWebhookPaths(t *testing.T) {
	h, err := webhookproxy.New(noDecider{}, webhookproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var paths []string
	for _, o := range renderAll(t)["overlays/ha"] {
		var hooks []admissionregistrationv1.ValidatingWebhook
		switch o.GetKind() {
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
				t.Fatal(err)
			}
			hooks = c.Webhooks
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
				t.Fatal(err)
			}
			for _, m := range c.Webhooks {
				hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{
					Name: m.Name, ClientConfig: m.ClientConfig, FailurePolicy: m.FailurePolicy,
					NamespaceSelector: m.NamespaceSelector, MatchConditions: m.MatchConditions, TimeoutSeconds: m.TimeoutSeconds,
				})
			}
		default:
			continue
		}
		if o.GetAnnotations()["cert-manager.io/inject-ca-from"] != "verdict/verdict-webhook-tls" {
			t.Errorf("%s %s: no cert-manager.io/inject-ca-from annotation", o.GetKind(), o.GetName())
		}
		for _, wh := range hooks {
			svc := wh.ClientConfig.Service
			if svc == nil || svc.Name != "verdict-webhook" || svc.Namespace != "verdict" || svc.Path == nil {
				t.Errorf("webhook %s: clientConfig.service = %+v, want verdict/verdict-webhook with a path", wh.Name, svc)
				continue
			}
			paths = append(paths, *svc.Path)
			policyValidation := *svc.Path == "/policyvalidate"
			resp, err := http.Post(srv.URL+*svc.Path, "application/json", strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("POST %s (webhook %s) = %d, want 400 (a path the proxy serves)", *svc.Path, wh.Name, resp.StatusCode)
			}
			wantFP := admissionregistrationv1.Fail
			if strings.HasSuffix(*svc.Path, "/ignore") {
				wantFP = admissionregistrationv1.Ignore
			}
			if wh.FailurePolicy == nil || *wh.FailurePolicy != wantFP {
				t.Errorf("webhook %s: failurePolicy = %v, want %s", wh.Name, wh.FailurePolicy, wantFP)
			}
			if wh.TimeoutSeconds == nil || *wh.TimeoutSeconds != 10 {
				t.Errorf("webhook %s: timeoutSeconds = %v, want 10 (the proxy's --timeout is 8s)", wh.Name, wh.TimeoutSeconds)
			}
			if policyValidation {
				// Kyverno's policy kinds only: no resource filters.
				var got []string
				for _, r := range wh.Rules {
					for _, g := range r.APIGroups {
						for _, res := range r.Resources {
							got = append(got, g+"/"+res)
						}
					}
				}
				want := []string{
					"kyverno.io/clusterpolicies", "kyverno.io/policies", "kyverno.io/policyexceptions",
					"policies.kyverno.io/validatingpolicies", "policies.kyverno.io/namespacedvalidatingpolicies", "policies.kyverno.io/policyexceptions",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("webhook %s: rules (-want +got):\n%s", wh.Name, diff)
				}
				continue
			}
			var excluded []string
			if wh.NamespaceSelector != nil {
				for _, e := range wh.NamespaceSelector.MatchExpressions {
					if e.Key == corev1.LabelMetadataName && e.Operator == "NotIn" {
						excluded = append(excluded, e.Values...)
					}
				}
			}
			for _, ns := range []string{"verdict", "kube-system", "kube-node-lease"} {
				if !slices.Contains(excluded, ns) {
					t.Errorf("webhook %s: namespace %s not excluded by namespaceSelector", wh.Name, ns)
				}
			}
			var conds []string
			for _, c := range wh.MatchConditions {
				conds = append(conds, c.Expression)
			}
			for _, want := range []string{`"coordination.k8s.io" && request.resource.resource == "leases"`, `"events"`} {
				if !strings.Contains(strings.Join(conds, "\n"), want) {
					t.Errorf("webhook %s: no matchCondition with %s", wh.Name, want)
				}
			}
		}
	}
	slices.Sort(paths)
	if diff := cmp.Diff([]string{"/mutate/fail", "/mutate/ignore", "/policyvalidate", "/validate/fail", "/validate/ignore"}, paths); diff != "" {
		t.Errorf("webhook paths (-want +got):\n%s", diff)
	}
}

type noDecider struct{}

func (noDecider) ValidatePolicies(context.Context, *verdictv1.ValidatePoliciesRequest, ...grpc.CallOption) (*verdictv1.ValidatePoliciesResponse, error) {
	return nil, fmt.Errorf("not called")
}

func (noDecider) Evaluate(context.Context, *verdictv1.EvaluateRequest, ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	return nil, fmt.Errorf("not called")
}

// TestRBAC checks that each component's ServiceAccount is bound, and that
// no rule grants wildcards, secrets, or escalation verbs.
func TestRBAC(t *testing.T) {
	objs := renderAll(t)["base"]
	bound := map[string]bool{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			for i, rule := range r.Rules {
				for _, f := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
					if slices.Contains(f, "*") {
						t.Errorf("%s %s: rules[%d] has a wildcard: %+v", o.GetKind(), o.GetName(), i, rule)
					}
				}
				for _, v := range []string{"escalate", "bind", "impersonate"} {
					if slices.Contains(rule.Verbs, v) {
						t.Errorf("%s %s: rules[%d] grants %s", o.GetKind(), o.GetName(), i, v)
					}
				}
				if slices.Contains(rule.Resources, "secrets") {
					t.Errorf("%s %s: rules[%d] grants access to secrets", o.GetKind(), o.GetName(), i)
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			for _, s := range b.Subjects {
				if s.Kind == "ServiceAccount" && s.Namespace == "verdict" {
					bound[s.Name] = true
				}
			}
		}
	}
	ws, err := Workloads(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if !bound[w.Pod.ServiceAccountName] {
			t.Errorf("%s %s: ServiceAccount %s has no binding", w.Kind, w.Name, w.Pod.ServiceAccountName)
		}
	}
}

// TestServerRBAC checks that the decision server may list and watch every
// resource its Kubernetes policy source reads.
func TestServerRBAC(t *testing.T) {
	granted := map[schema.GroupResource]bool{}
	for _, o := range renderAll(t)["base"] {
		if o.GetKind() != "ClusterRole" || o.GetLabels()["verdict.io/aggregate-to-server"] != "true" {
			continue
		}
		var r rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
			t.Fatal(err)
		}
		for _, rule := range r.Rules {
			if !slices.Contains(rule.Verbs, "list") || !slices.Contains(rule.Verbs, "watch") {
				continue
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					granted[schema.GroupResource{Group: g, Resource: res}] = true
				}
			}
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		kubesource.ClusterPolicies, kubesource.Policies, kubesource.PolicyExceptions,
		kubesource.ValidatingPolicies, kubesource.NamespacedValidatingPolicies, kubesource.CELPolicyExceptions,
	} {
		if !granted[gvr.GroupResource()] {
			t.Errorf("the server's ClusterRoles do not grant list and watch on %s", gvr.GroupResource())
		}
	}
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
