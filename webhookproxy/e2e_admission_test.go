//go:build e2e

package webhookproxy_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// generateLabelledPolicy generates a ConfigMap in each Namespace labelled
// generate: "yes".
const generateLabelledPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-ns-defaults
spec:
  rules:
    - name: defaults-configmap
      match:
        any:
          - resources:
              kinds: [Namespace]
              selector:
                matchLabels:
                  generate: "yes"
      generate:
        apiVersion: v1
        kind: ConfigMap
        name: ns-defaults
        namespace: "{{request.object.metadata.name}}"
        synchronize: true
        data:
          data:
            owner: platform
`

// lockedSecretsPolicy blocks Secrets without label approved in the
// namespaces labelled env: locked.
const lockedSecretsPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: locked-secrets
spec:
  rules:
    - name: approved
      match:
        any:
          - resources:
              kinds: [Secret]
              namespaceSelector:
                matchLabels:
                  env: locked
      validate:
        failureAction: Enforce
        message: "secrets in locked namespaces need label approved"
        pattern:
          metadata:
            labels:
              approved: "?*"
`

// saTierPolicy blocks ServiceAccounts without label tier (Enforce;
// existing violations allowed, Kyverno's default).
const saTierPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-sa-tier
spec:
  rules:
    - name: tier
      match:
        any:
          - resources:
              kinds: [ServiceAccount]
      validate:
        failureAction: Enforce
        message: "label tier is required"
        pattern:
          metadata:
            labels:
              tier: "?*"
`

// warningRecorder is a rest.WarningHandler that keeps the warnings.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// admissionEnv is a cluster with the proxy registered as a validating and
// a mutating webhook (the /fail paths), with the namespace informer and
// the generate applier.
type admissionEnv struct {
	cs       kubernetes.Interface
	warnings *warningRecorder
	registry *prometheus.Registry
}

func startAdmissionEnv(t *testing.T, beforeWebhooks func(kubernetes.Interface), policies ...string) *admissionEnv {
	t.Helper()
	cluster := e2e.Start(t, e2e.Options{})
	cfg := rest.CopyConfig(cluster.Config)
	rec := &warningRecorder{}
	cfg.WarningHandler = rec
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if beforeWebhooks != nil {
		beforeWebhooks(cs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	adminCS, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	nc, err := webhookproxy.NewNamespaceCache(adminCS, webhookproxy.NamespaceCacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nc.Start(ctx)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	app, err := webhookproxy.NewApplier(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), webhookproxy.ApplierOptions{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	appDone := make(chan struct{})
	go func() { app.Run(ctx); close(appDone) }()
	t.Cleanup(func() { cancel(); <-appDone })

	dec := startDecisionServer(t, policies...)
	tlsCfg, ca, err := webhookproxy.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhookproxy.New(dec, webhookproxy.Options{Namespaces: nc, Generator: app, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- webhookproxy.Serve(sctx, lis, tlsCfg, h, nil) }()
	t.Cleanup(func() {
		scancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	url := "https://" + lis.Addr().String()
	registerAdmissionWebhooks(t, adminCS, url, ca)
	return &admissionEnv{cs: cs, warnings: rec, registry: reg}
}

func registerAdmissionWebhooks(t *testing.T, cs kubernetes.Interface, url string, ca []byte) {
	t.Helper()
	ctx := context.Background()
	validate, mutate := url+"/validate/fail", url+"/mutate/fail"
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	rule := func(resources ...string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}}
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "verdict-e2e-mutate"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "mutate.verdict.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &mutate, CABundle: ca},
			Rules:                   rule("configmaps"),
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create MutatingWebhookConfiguration: %v", err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "verdict-e2e-validate"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate.verdict.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &validate, CABundle: ca},
			Rules:                   rule("namespaces", "configmaps", "secrets", "serviceaccounts"),
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ValidatingWebhookConfiguration: %v", err)
	}
	// Wait until both are called: a dry-run ServiceAccount without tier
	// is denied, a dry-run ConfigMap gets the team label.
	probeSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe", Namespace: "default"}}
	probeCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe", Namespace: "default", Labels: map[string]string{"owner": "probe"}}}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	pollUntil(t, 30*time.Second, "the webhooks are called", func() (bool, string) {
		_, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, probeSA, dry)
		if err == nil || !strings.Contains(err.Error(), "validate.verdict.test") {
			return false, "ServiceAccount create: " + errString(err)
		}
		cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, probeCM, dry)
		if err != nil || cm.Labels["team"] != "platform" {
			return false, "ConfigMap create: " + errString(err)
		}
		return true, ""
	})
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// pollUntil calls f every 100 ms until it reports true, failing t after
// timeout with f's last reason.
func pollUntil(t *testing.T, timeout time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := f()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %s", what, timeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAdmissionThroughAPIServer runs the proxy as the validating and
// mutating webhook of a real kube-apiserver: Audit warnings, a mutation
// on the stored object, a generated resource, namespaceSelector through
// the namespace informer, and Enforce with existing violations allowed.
func TestAdmissionThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	env := startAdmissionEnv(t, func(cs kubernetes.Interface) {
		// Created before any webhook: a resource that already violates
		// require-sa-tier when the policy comes.
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ServiceAccount legacy: %v", err)
		}
	}, auditPolicy, labelPolicy, generateLabelledPolicy, lockedSecretsPolicy, saTierPolicy)
	cs := env.cs
	env.warnings.take()

	t.Run("audit warning and mutation", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "no-owner", Namespace: "default"}, Data: map[string]string{"a": "b"}}
		got, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create(ConfigMap no-owner) = %v, want allowed", err)
		}
		want := []string{"policy want-owner.owner: validation error: label owner is expected. rule owner failed at path /metadata/labels/owner/"}
		if diff := cmp.Diff(want, env.warnings.take()); diff != "" {
			t.Errorf("warnings of Create(ConfigMap no-owner) (-want +got):\n%s", diff)
		}
		stored, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "no-owner", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"team": "platform"}, stored.Labels); diff != "" {
			t.Errorf("stored labels of ConfigMap no-owner (-want +got):\n%s", diff)
		}
		if got.Labels["team"] != "platform" {
			t.Errorf("Create returned labels %v, want team: platform", got.Labels)
		}
	})

	t.Run("generate with server-side apply", func(t *testing.T) {
		ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-gen", Labels: map[string]string{"generate": "yes"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create(Namespace e2e-gen): %v", err)
		}
		var gen *corev1.ConfigMap
		pollUntil(t, 30*time.Second, "ConfigMap e2e-gen/ns-defaults generated", func() (bool, string) {
			gen, err = cs.CoreV1().ConfigMaps("e2e-gen").Get(ctx, "ns-defaults", metav1.GetOptions{})
			return err == nil, errString(err)
		})
		wantLabels := map[string]string{
			"app.kubernetes.io/managed-by":          "kyverno",
			"generate.kyverno.io/policy-name":       "add-ns-defaults",
			"generate.kyverno.io/policy-namespace":  "",
			"generate.kyverno.io/rule-name":         "defaults-configmap",
			"generate.kyverno.io/trigger-group":     "",
			"generate.kyverno.io/trigger-kind":      "Namespace",
			"generate.kyverno.io/trigger-namespace": "",
			"generate.kyverno.io/trigger-uid":       string(ns.UID),
			"generate.kyverno.io/trigger-version":   "v1",
			"team":                                  "platform", // labelPolicy mutates the generated ConfigMap too
		}
		if diff := cmp.Diff(wantLabels, gen.Labels); diff != "" {
			t.Errorf("labels of the generated ConfigMap (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"owner": "platform"}, gen.Data); diff != "" {
			t.Errorf("data of the generated ConfigMap (-want +got):\n%s", diff)
		}
		var managers []string
		for _, mf := range gen.ManagedFields {
			managers = append(managers, mf.Manager+"/"+string(mf.Operation))
		}
		if diff := cmp.Diff([]string{"verdict/Apply"}, managers); diff != "" {
			t.Errorf("field managers of the generated ConfigMap (-want +got):\n%s", diff)
		}

		// An update of the trigger applies the same intent again: the
		// generated ConfigMap is not written.
		before := counterOf(t, env.registry, "verdict_webhook_generate_total", "outcome", "applied")
		ns.Labels["touched"] = "yes"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("Update(Namespace e2e-gen): %v", err)
		}
		pollUntil(t, 30*time.Second, "the generate intent of the update applied", func() (bool, string) {
			n := counterOf(t, env.registry, "verdict_webhook_generate_total", "outcome", "applied")
			return n > before, "verdict_webhook_generate_total{outcome=applied} unchanged"
		})
		again, err := cs.CoreV1().ConfigMaps("e2e-gen").Get(ctx, "ns-defaults", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if again.ResourceVersion != gen.ResourceVersion {
			t.Errorf("resourceVersion of the generated ConfigMap after applying the same intent = %s, want %s (unchanged)", again.ResourceVersion, gen.ResourceVersion)
		}
	})

	t.Run("namespaceSelector through the namespace informer", func(t *testing.T) {
		for name, env := range map[string]string{"e2e-locked": "locked", "e2e-open": "open"} {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": env}}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("Create(Namespace %s): %v", name, err)
			}
		}
		tests := []struct {
			namespace string
			labels    map[string]string
			wantDeny  bool
		}{
			{namespace: "e2e-locked", wantDeny: true},
			{namespace: "e2e-locked", labels: map[string]string{"approved": "yes"}},
			{namespace: "e2e-open"},
		}
		for i, tt := range tests {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s" + string(rune('a'+i)), Namespace: tt.namespace, Labels: tt.labels}}
			_, err := cs.CoreV1().Secrets(tt.namespace).Create(ctx, s, metav1.CreateOptions{})
			switch {
			case tt.wantDeny && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "secrets in locked namespaces need label approved")):
				t.Errorf("Create(Secret %s/%s, labels %v) = %v, want denied by locked-secrets", tt.namespace, s.Name, tt.labels, err)
			case !tt.wantDeny && err != nil:
				t.Errorf("Create(Secret %s/%s, labels %v) = %v, want allowed", tt.namespace, s.Name, tt.labels, err)
			}
		}
	})

	t.Run("enforce allows existing violations", func(t *testing.T) {
		sas := cs.CoreV1().ServiceAccounts("default")
		update := func(labels, annotations map[string]string) error {
			sa, err := sas.Get(ctx, "legacy", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sa.Labels, sa.Annotations = labels, annotations
			_, err = sas.Update(ctx, sa, metav1.UpdateOptions{})
			return err
		}
		steps := []struct {
			name     string
			labels   map[string]string
			wantDeny bool
		}{
			{name: "update that keeps the existing violation"},
			{name: "update that fixes it", labels: map[string]string{"tier": "web"}},
			{name: "update that breaks it again", wantDeny: true},
		}
		for i, st := range steps {
			err := update(st.labels, map[string]string{"step": string(rune('0' + i))})
			switch {
			case st.wantDeny && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "require-sa-tier")):
				t.Errorf("%s: Update(ServiceAccount legacy) = %v, want denied by require-sa-tier", st.name, err)
			case !st.wantDeny && err != nil:
				t.Errorf("%s: Update(ServiceAccount legacy) = %v, want allowed", st.name, err)
			}
		}
		_, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("Create(ServiceAccount fresh without tier) = %v, want denied", err)
		}
	})
}
