//go:build e2e

package webhookproxy_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// webhookName names the validating webhook registered by the e2e tests;
// the API server quotes it in every denial.
const webhookName = "namespaces.verdict.test"

// startE2EProxy serves a webhook proxy of a decision server with policies
// on loopback HTTPS (self-signed) and returns its base URL and CA bundle.
func startE2EProxy(t *testing.T, policies ...string) (string, []byte) {
	t.Helper()
	dc := startDecisionServer(t, policies...)
	cfg, ca, err := webhookproxy.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhookproxy.New(dc, webhookproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- webhookproxy.Serve(ctx, lis, cfg, h, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + lis.Addr().String(), ca
}

// registerNamespaceWebhook points a ValidatingWebhookConfiguration for
// Namespace CREATE and UPDATE at url+"/validate" and waits until the API
// server calls it (a dry-run create of an unlabelled namespace is denied).
func registerNamespaceWebhook(t *testing.T, cs kubernetes.Interface, url string, ca []byte) {
	t.Helper()
	ctx := context.Background()
	endpoint := url + "/validate"
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "verdict-e2e"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    webhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &endpoint, CABundle: ca},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"namespaces"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ValidatingWebhookConfiguration: %v", err)
	}
	probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-webhook-probe"}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().Namespaces().Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "admission webhook \""+webhookName+"\" denied the request") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook not called after 30s: last dry-run create answered %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestNamespacePolicyThroughAPIServer reproduces validate.md's Namespace
// example through a real kube-apiserver: the API server calls the proxy,
// the proxy the decision server.
func TestNamespacePolicyThroughAPIServer(t *testing.T) {
	cluster := e2e.Start(t, e2e.Options{})
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	url, ca := startE2EProxy(t, nsPolicy)
	registerNamespaceWebhook(t, cs, url, ca)

	deny := func(name, path string) string {
		return "admission webhook \"" + webhookName + "\" denied the request: \n\nresource Namespace//" + name +
			" was blocked due to the following policies \n\nrequire-ns-purpose-label:\n  require-ns-purpose-label: " +
			"'validation error: You must have label `purpose` with value `production` set on all new namespaces. " +
			"rule require-ns-purpose-label failed at path " + path + "'\n"
	}
	tests := []struct {
		name    string
		labels  map[string]string
		wantErr string // the API server's message; "" means created
	}{
		{name: "e2e-production", labels: map[string]string{"purpose": "production"}},
		{name: "e2e-development", labels: map[string]string{"purpose": "development"}, wantErr: deny("e2e-development", "/metadata/labels/purpose/")},
		// The API server labels every namespace with
		// kubernetes.io/metadata.name before admission, so the
		// webhook sees labels without purpose: the path ends in
		// purpose/ (kyverno apply on the bare manifest says
		// /metadata/labels/).
		{name: "e2e-unlabelled", wantErr: deny("e2e-unlabelled", "/metadata/labels/purpose/")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.name, Labels: tt.labels}}
			_, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
			if tt.wantErr != "" {
				var st *apierrors.StatusError
				if !errors.As(err, &st) || !apierrors.IsForbidden(err) {
					t.Fatalf("Create(%s) = %v, want a Forbidden status error", tt.name, err)
				}
				if diff := cmp.Diff(tt.wantErr, st.ErrStatus.Message); diff != "" {
					t.Errorf("Create(%s) message (-want +got):\n%s", tt.name, diff)
				}
				if _, err := cs.CoreV1().Namespaces().Get(context.Background(), tt.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("Get(%s) after the denial = %v, want NotFound", tt.name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create(%s) = %v, want created", tt.name, err)
			}
			got, err := cs.CoreV1().Namespaces().Get(context.Background(), tt.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get(%s): %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.labels["purpose"], got.Labels["purpose"]); diff != "" {
				t.Errorf("stored label purpose (-want +got):\n%s", diff)
			}
		})
	}
}
