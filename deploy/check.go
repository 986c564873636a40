package deploy

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

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

// The checks below judge the objects of one install, a rendered
// kustomization or a rendered Helm chart, the same way; each returns every
// problem it finds (none: nil).

// Image is the container image of the manifests and of the chart's
// default values.
const Image = "ghcr.io/verdict-policy/verdict:v0.1.0"

// CRDNames are the CustomResourceDefinitions an install brings, sorted.
var CRDNames = []string{
	"clusterpolicies.kyverno.io", "clusterpolicyreports.wgpolicyk8s.io", "clusterreports.openreports.io",
	"deletingpolicies.policies.kyverno.io", "generatingpolicies.policies.kyverno.io", "globalcontextentries.kyverno.io",
	"imagevalidatingpolicies.policies.kyverno.io", "mutatingpolicies.policies.kyverno.io",
	"namespaceddeletingpolicies.policies.kyverno.io", "namespacedgeneratingpolicies.policies.kyverno.io",
	"namespacedimagevalidatingpolicies.policies.kyverno.io", "namespacedmutatingpolicies.policies.kyverno.io",
	"namespacedvalidatingpolicies.policies.kyverno.io", "policies.kyverno.io",
	"policyexceptions.kyverno.io", "policyexceptions.policies.kyverno.io",
	"policyreports.wgpolicyk8s.io", "reports.openreports.io", "validatingpolicies.policies.kyverno.io",
}

// decodeScheme knows the built-in kinds and the apiextensions ones.
func decodeScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err) // the built-in kinds always register
	}
	apiextensionsinstall.Install(s)
	return s
}

// certManagerIssuer and certManagerCertificate are the fields of the
// cert-manager.io/v1 objects an install uses (cert-manager's types are
// not a dependency).
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

// StrictDecode decodes a JSON object into its typed Kubernetes struct
// (cert-manager's into the fields above) and fails on an unknown kind, an
// unknown or duplicated field, or a value of the wrong type
// (kubeconform-style).
func StrictDecode(b []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if gv, err := schema.ParseGroupVersion(head.APIVersion); err == nil && gv.Group == "cert-manager.io" {
		var into any
		switch head.Kind {
		case "Issuer":
			into = &certManagerIssuer{}
		case "Certificate":
			into = &certManagerCertificate{}
		default:
			return fmt.Errorf("unknown cert-manager kind %s", head.Kind)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		return d.Decode(into)
	}
	s := decodeScheme()
	ser := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true})
	_, _, err := ser.Decode(b, nil, nil)
	return err
}

// CheckStrictDecode decodes every object strictly (StrictDecode).
func CheckStrictDecode(objs []*unstructured.Unstructured) []error {
	var errs []error
	for _, o := range objs {
		b, err := json.Marshal(o.Object)
		if err == nil {
			err = StrictDecode(b)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: decode: %w", o.GetKind(), o.GetName(), err))
		}
	}
	return errs
}

// ValidateCRD runs the API server's validation of a CRD on create
// (structural schemas, versions, names) on o.
func ValidateCRD(o *unstructured.Unstructured) (field.ErrorList, error) {
	s := decodeScheme()
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v1); err != nil {
		return nil, fmt.Errorf("CRD %s: %w", o.GetName(), err)
	}
	s.Default(&v1)
	var internal apiextensions.CustomResourceDefinition
	if err := s.Convert(&v1, &internal, nil); err != nil {
		return nil, fmt.Errorf("CRD %s: convert: %w", o.GetName(), err)
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal), nil
}

// CheckCRDs validates each CRD of objs as the API server does on create
// and checks that they are CRDNames.
func CheckCRDs(objs []*unstructured.Unstructured) []error {
	var errs []error
	var names []string
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		names = append(names, o.GetName())
		verrs, err := ValidateCRD(o)
		if err != nil {
			errs = append(errs, err)
		} else if len(verrs) > 0 {
			errs = append(errs, fmt.Errorf("CRD %s: %w", o.GetName(), verrs.ToAggregate()))
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, CRDNames) {
		errs = append(errs, fmt.Errorf("CRDs %q, want %q", names, CRDNames))
	}
	return errs
}

// clusterScoped are the cluster-scoped kinds an install has.
var clusterScoped = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// CheckNamespaced checks that every namespaced object lands in ns, and the
// cluster-scoped ones in none.
func CheckNamespaced(objs []*unstructured.Unstructured, ns string) []error {
	var errs []error
	for _, o := range objs {
		want := ns
		if clusterScoped[o.GetKind()] {
			want = ""
		}
		if got := o.GetNamespace(); got != want {
			errs = append(errs, fmt.Errorf("%s %s: namespace %q, want %q", o.GetKind(), o.GetName(), got, want))
		}
	}
	return errs
}

// CheckPodSecurity checks each workload: the image, non-root, read-only
// root filesystem, no capabilities, RuntimeDefault seccomp, requests and
// limits, GOMEMLIMIT under the memory limit, and the component's own
// ServiceAccount.
func CheckPodSecurity(objs []*unstructured.Unstructured, image string) []error {
	ws, err := Workloads(objs)
	if err != nil {
		return []error{err}
	}
	if len(ws) == 0 {
		return []error{errors.New("no workloads")}
	}
	var errs []error
	add := func(id, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", id, fmt.Sprintf(format, args...)))
	}
	for _, w := range ws {
		id := fmt.Sprintf("%s %s container %s", w.Kind, w.Name, w.Container.Name)
		c, p := w.Container, w.Pod
		if c.Image != image {
			add(id, "image = %q, want %q", c.Image, image)
		}
		if w.Component == "" {
			add(id, "no %s label", ComponentLabel)
		}
		sc := c.SecurityContext
		switch {
		case sc == nil:
			add(id, "no securityContext")
			continue
		case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
			add(id, "runAsNonRoot not true")
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			add(id, "readOnlyRootFilesystem not true")
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			add(id, "allowPrivilegeEscalation not false")
		case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
			add(id, "capabilities = %+v, want drop [ALL]", sc.Capabilities)
		case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
			add(id, "seccompProfile not RuntimeDefault")
		}
		if psc := p.SecurityContext; psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.SeccompProfile == nil {
			add(id, "pod securityContext without a non-zero runAsUser and a seccompProfile")
		}
		if p.HostNetwork || p.HostPID || p.HostIPC {
			add(id, "host namespaces")
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[r]; !ok {
				add(id, "no %s request", r)
			}
			if _, ok := c.Resources.Limits[r]; !ok {
				add(id, "no %s limit", r)
			}
		}
		limit := c.Resources.Limits[corev1.ResourceMemory]
		for _, e := range c.Env {
			if e.Name != "GOMEMLIMIT" {
				continue
			}
			soft, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B"))
			if err != nil {
				add(id, "GOMEMLIMIT %q: %v", e.Value, err)
			} else if soft.Cmp(limit) >= 0 {
				add(id, "GOMEMLIMIT %s not below the memory limit %s", e.Value, limit.String())
			}
		}
		if p.ServiceAccountName == "" || p.ServiceAccountName == "default" {
			add(id, "serviceAccountName = %q, want the component's own", p.ServiceAccountName)
		}
	}
	return errs
}

// WebhookCA says how an install gives the webhook configurations the CA of
// the proxy's certificate.
type WebhookCA int

const (
	// CAByHand: neither a caBundle nor an annotation; the operator patches
	// the caBundle in (the base, overlays/dev).
	CAByHand WebhookCA = iota
	// CACertManager: the cert-manager.io/inject-ca-from annotation naming
	// the Secret verdict-webhook-tls (overlays/ha, the chart's
	// webhook.tls.mode cert-manager).
	CACertManager
	// CABundle: a caBundle on every webhook that verifies the certificate
	// of the install's Secret verdict-webhook-tls for the proxy's Service
	// (the chart's webhook.tls.mode helm).
	CABundle
)

// WebhookOptions are what CheckWebhooks expects of an install.
type WebhookOptions struct {
	Namespace string // of the install
	CA        WebhookCA
	// FailurePolicy of the webhooks that fail closed (/validate/fail,
	// /mutate/fail, /policyvalidate): Fail, or Ignore (overlays/dev).
	FailurePolicy admissionregistrationv1.FailurePolicyType
}

// CheckWebhooks checks that every webhook of the configurations calls a
// path the proxy serves (a real webhookproxy.Handler answers it with 400
// for an empty body, not 404), on the proxy's Service, with the failure
// policy of its path, a timeout above the proxy's --timeout, a CA as
// opts.CA says, and that the proxy never sees its own namespace,
// kube-system or Leases.
func CheckWebhooks(objs []*unstructured.Unstructured, opts WebhookOptions) []error {
	h, err := webhookproxy.New(noDecider{}, webhookproxy.Options{})
	if err != nil {
		return []error{err}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var serving *x509.Certificate
	if opts.CA == CABundle {
		if serving, err = servingCert(objs, opts.Namespace); err != nil {
			return []error{err}
		}
	}
	var paths []string
	for _, o := range objs {
		var hooks []admissionregistrationv1.ValidatingWebhook
		switch o.GetKind() {
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
				return append(errs, err)
			}
			hooks = c.Webhooks
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
				return append(errs, err)
			}
			for _, m := range c.Webhooks {
				hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{
					Name: m.Name, ClientConfig: m.ClientConfig, FailurePolicy: m.FailurePolicy, Rules: m.Rules,
					NamespaceSelector: m.NamespaceSelector, MatchConditions: m.MatchConditions, TimeoutSeconds: m.TimeoutSeconds,
				})
			}
		default:
			continue
		}
		inject := o.GetAnnotations()["cert-manager.io/inject-ca-from"]
		if want := opts.Namespace + "/verdict-webhook-tls"; opts.CA == CACertManager && inject != want {
			add("%s %s: cert-manager.io/inject-ca-from = %q, want %q", o.GetKind(), o.GetName(), inject, want)
		} else if opts.CA != CACertManager && inject != "" {
			add("%s %s: cert-manager.io/inject-ca-from = %q, want none", o.GetKind(), o.GetName(), inject)
		}
		for _, wh := range hooks {
			svc := wh.ClientConfig.Service
			if svc == nil || svc.Name != "verdict-webhook" || svc.Namespace != opts.Namespace || svc.Path == nil {
				add("webhook %s: clientConfig.service = %+v, want %s/verdict-webhook with a path", wh.Name, svc, opts.Namespace)
				continue
			}
			paths = append(paths, *svc.Path)
			switch bundle := wh.ClientConfig.CABundle; {
			case opts.CA == CABundle:
				if err := verifyServing(serving, bundle, opts.Namespace); err != nil {
					add("webhook %s: caBundle: %v", wh.Name, err)
				}
			case len(bundle) > 0:
				add("webhook %s: a caBundle, want none (%v)", wh.Name, opts.CA)
			}
			resp, err := http.Post(srv.URL+*svc.Path, "application/json", strings.NewReader(""))
			if err != nil {
				return append(errs, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				add("POST %s (webhook %s) = %d, want 400 (a path the proxy serves)", *svc.Path, wh.Name, resp.StatusCode)
			}
			wantFP := opts.FailurePolicy
			if strings.HasSuffix(*svc.Path, "/ignore") {
				wantFP = admissionregistrationv1.Ignore
			}
			if wh.FailurePolicy == nil || *wh.FailurePolicy != wantFP {
				add("webhook %s: failurePolicy = %v, want %s", wh.Name, wh.FailurePolicy, wantFP)
			}
			if wh.TimeoutSeconds == nil || *wh.TimeoutSeconds != 10 {
				add("webhook %s: timeoutSeconds = %v, want 10 (the proxy's --timeout is 8s)", wh.Name, wh.TimeoutSeconds)
			}
			if *svc.Path == "/policyvalidate" {
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
					"policies.kyverno.io/imagevalidatingpolicies", "policies.kyverno.io/namespacedimagevalidatingpolicies",
					"policies.kyverno.io/generatingpolicies", "policies.kyverno.io/namespacedgeneratingpolicies",
					"policies.kyverno.io/deletingpolicies", "policies.kyverno.io/namespaceddeletingpolicies",
					"policies.kyverno.io/mutatingpolicies", "policies.kyverno.io/namespacedmutatingpolicies",
				}
				if !slices.Equal(got, want) {
					add("webhook %s: rules %q, want %q", wh.Name, got, want)
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
			for _, ns := range []string{opts.Namespace, "kube-system", "kube-node-lease"} {
				if !slices.Contains(excluded, ns) {
					add("webhook %s: namespace %s not excluded by namespaceSelector", wh.Name, ns)
				}
			}
			var conds []string
			for _, c := range wh.MatchConditions {
				conds = append(conds, c.Expression)
			}
			for _, want := range []string{`"coordination.k8s.io" && request.resource.resource == "leases"`, `"events"`} {
				if !strings.Contains(strings.Join(conds, "\n"), want) {
					add("webhook %s: no matchCondition with %s", wh.Name, want)
				}
			}
		}
	}
	slices.Sort(paths)
	if want := []string{"/mutate/fail", "/mutate/ignore", "/policyvalidate", "/validate/fail", "/validate/ignore"}; !slices.Equal(paths, want) {
		add("webhook paths %q, want %q", paths, want)
	}
	return errs
}

// servingCert returns the certificate of the Secret verdict-webhook-tls
// of objs in ns.
func servingCert(objs []*unstructured.Unstructured, ns string) (*x509.Certificate, error) {
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetName() != "verdict-webhook-tls" || o.GetNamespace() != ns {
			continue
		}
		var s corev1.Secret
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
			return nil, err
		}
		if s.Type != corev1.SecretTypeTLS {
			return nil, fmt.Errorf("secret verdict-webhook-tls: type %s, want %s", s.Type, corev1.SecretTypeTLS)
		}
		block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
		if block == nil {
			return nil, errors.New("secret verdict-webhook-tls: tls.crt holds no PEM certificate")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("secret verdict-webhook-tls: tls.crt: %w", err)
		}
		return cert, nil
	}
	return nil, fmt.Errorf("no Secret %s/verdict-webhook-tls", ns)
}

// verifyServing checks that cert chains to a CA of bundle (PEM) and names
// the proxy's Service in ns, as the API server checks it.
func verifyServing(cert *x509.Certificate, bundle []byte, ns string) error {
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(bundle) {
		return errors.New("no PEM certificate")
	}
	_, err := cert.Verify(x509.VerifyOptions{
		DNSName: "verdict-webhook." + ns + ".svc", Roots: cas,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

type noDecider struct{}

func (noDecider) ValidatePolicies(context.Context, *verdictv1.ValidatePoliciesRequest, ...grpc.CallOption) (*verdictv1.ValidatePoliciesResponse, error) {
	return nil, errors.New("not called")
}

func (noDecider) Evaluate(context.Context, *verdictv1.EvaluateRequest, ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	return nil, errors.New("not called")
}

// CheckRBAC checks that each workload's ServiceAccount is bound in ns,
// and that no rule grants wildcards, secrets, or escalation verbs.
func CheckRBAC(objs []*unstructured.Unstructured, ns string) []error {
	var errs []error
	bound := map[string]bool{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				return append(errs, err)
			}
			for i, rule := range r.Rules {
				for _, f := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
					if slices.Contains(f, "*") {
						errs = append(errs, fmt.Errorf("%s %s: rules[%d] has a wildcard: %+v", o.GetKind(), o.GetName(), i, rule))
					}
				}
				for _, v := range []string{"escalate", "bind", "impersonate"} {
					if slices.Contains(rule.Verbs, v) {
						errs = append(errs, fmt.Errorf("%s %s: rules[%d] grants %s", o.GetKind(), o.GetName(), i, v))
					}
				}
				if slices.Contains(rule.Resources, "secrets") {
					errs = append(errs, fmt.Errorf("%s %s: rules[%d] grants access to secrets", o.GetKind(), o.GetName(), i))
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				return append(errs, err)
			}
			for _, s := range b.Subjects {
				if s.Kind == "ServiceAccount" && s.Namespace == ns {
					bound[s.Name] = true
				}
			}
		}
	}
	ws, err := Workloads(objs)
	if err != nil {
		return append(errs, err)
	}
	for _, w := range ws {
		if !bound[w.Pod.ServiceAccountName] {
			errs = append(errs, fmt.Errorf("%s %s: ServiceAccount %s has no binding in %s", w.Kind, w.Name, w.Pod.ServiceAccountName, ns))
		}
	}
	return errs
}

// CheckServerRBAC checks that the decision server may list and watch every
// resource its Kubernetes policy source reads.
func CheckServerRBAC(objs []*unstructured.Unstructured) []error {
	granted := map[schema.GroupResource]bool{}
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" || o.GetLabels()["verdict.io/aggregate-to-server"] != "true" {
			continue
		}
		var r rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
			return []error{err}
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
	var errs []error
	for _, gvr := range []schema.GroupVersionResource{
		kubesource.ClusterPolicies, kubesource.Policies, kubesource.PolicyExceptions,
		kubesource.ValidatingPolicies, kubesource.NamespacedValidatingPolicies, kubesource.CELPolicyExceptions,
		kubesource.ValidatingAdmissionPolicies, kubesource.ValidatingAdmissionPolicyBindings,
	} {
		if !granted[gvr.GroupResource()] {
			errs = append(errs, fmt.Errorf("the server's ClusterRoles do not grant list and watch on %s", gvr.GroupResource()))
		}
	}
	return errs
}
