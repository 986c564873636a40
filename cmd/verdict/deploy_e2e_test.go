//go:build e2e

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/deploy"
	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// nsPurposePolicy is validate.md's Namespace example.
const nsPurposePolicy = `apiVersion: kyverno.io/v1
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

// TestE2EDeployProcesses starts the report writer, the decision server
// and the webhook proxy of overlays/dev with the flags of its manifests
// (deploy.Args; --in-cluster becomes --kubeconfig, addresses move to
// loopback, files to a temporary folder), against the CRDs of deploy/crds
// on a real API server, registers the manifests' validating webhooks at the
// proxy's loopback URL, and checks validate.md's Namespace example through
// them. It is the starting point of the end-to-end scenarios.
func TestE2EDeployProcesses(t *testing.T) {
	d := deployDev(t, nsPurposePolicy)
	ctx, cs, overlay, kubeconfig, serverAddr, writerAddr := t.Context(), d.cs, d.overlay, d.kubeconfig, d.serverAddr, d.writerAddr
	// Kyverno's message quotes the rule's message as YAML does.
	const wantMsg = "validation error: You must have label ''purpose'' with value ''production'' set on all new namespaces."
	poll(t, 30*time.Second, "the webhook denies a namespace without the label", func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			return errf("dry-run create = %v", err)
		}
		return nil
	})
	// One shard of the CronJob's scan, as its pod 0 runs it.
	scanArgs, err := deploy.Args(overlay, "scanner", map[string]string{"JOB_COMPLETION_INDEX": "0"})
	if err != nil {
		t.Fatal(err)
	}
	scanArgs = deploy.LocalArgs(scanArgs, kubeconfig, map[string]string{"server": serverAddr, "report-writer": writerAddr})
	var scanOut, scanErr bytes.Buffer
	if code := run(ctx, scanArgs, &scanOut, &scanErr); code != 0 {
		t.Errorf("verdict %s = exit %d, want 0\n%s%s", strings.Join(scanArgs, " "), code, scanOut.String(), scanErr.String())
	}

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod-bus-app1", Labels: map[string]string{"purpose": "production"}}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create Namespace prod-bus-app1 with purpose: production = %v, want allowed", err)
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev-bus-app1", Labels: map[string]string{"purpose": "development"}}}, metav1.CreateOptions{})
	for _, want := range []string{
		`admission webhook "validate-fail.verdict.io" denied the request`,
		"resource Namespace//dev-bus-app1 was blocked due to the following policies",
		"require-ns-purpose-label:", wantMsg,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("create Namespace dev-bus-app1 with purpose: development = %v, want an error with %q", err, want)
		}
	}
}

// devDeployment is overlays/dev running against a real API server:
// clients of the cluster, the loopback addresses of the processes started
// with the manifests' flags, and the rendered objects.
type devDeployment struct {
	*devCluster
	c                                 *client.Client
	writerAddr, serverAddr, proxyAddr string
	ca                                []byte // the proxy's certificate
}

// devCluster is a real API server with the CRDs and Namespaces of
// overlays/dev applied, and clients of it.
type devCluster struct {
	cluster                  *e2e.Cluster
	cs                       *kubernetes.Clientset
	dyn                      *dynamic.DynamicClient
	mapper                   *restmapper.DeferredDiscoveryRESTMapper
	cached                   discovery.CachedDiscoveryInterface
	objs                     []*unstructured.Unstructured // overlays/dev, rendered
	overlay, dir, kubeconfig string
}

// startDevCluster starts an API server and applies the CRDs and
// Namespaces of overlays/dev.
func startDevCluster(t *testing.T) *devCluster {
	t.Helper()
	cluster := e2e.Start(t, e2e.Options{})
	dc := &devCluster{cluster: cluster, overlay: "overlays/dev", dir: t.TempDir()}
	dc.kubeconfig = writeE2EKubeconfig(t, cluster, filepath.Join(dc.dir, "kubeconfig"))
	var err error
	if dc.cs, err = kubernetes.NewForConfig(cluster.Config); err != nil {
		t.Fatal(err)
	}
	if dc.dyn, err = dynamic.NewForConfig(cluster.Config); err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc.cached = memory.NewMemCacheClient(disc)
	dc.mapper = restmapper.NewDeferredDiscoveryRESTMapper(dc.cached)
	if dc.objs, err = deploy.Render(dc.overlay); err != nil {
		t.Fatal(err)
	}
	for _, o := range dc.objs {
		if o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" {
			if err := deploy.Apply(context.Background(), dc.dyn, dc.mapper, o, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dc
}

// applyPolicies creates the policies (YAML documents) through their CRDs,
// retrying while the CRDs are not served yet.
func (dc *devCluster) applyPolicies(t *testing.T, policies ...string) {
	t.Helper()
	for _, doc := range policies {
		var pol map[string]any
		if err := yaml.Unmarshal([]byte(doc), &pol); err != nil {
			t.Fatal(err)
		}
		poll(t, 30*time.Second, "ClusterPolicy created through the CRD", func() error {
			dc.cached.Invalidate()
			dc.mapper.Reset()
			return deploy.Apply(context.Background(), dc.dyn, dc.mapper, &unstructured.Unstructured{Object: pol}, false)
		})
	}
}

// deployDev starts a cluster, applies the CRDs and namespaces of
// overlays/dev and the given policies, starts the report writer, the
// decision server and the webhook proxy with the manifests' flags, and
// registers the manifests' validating webhooks at the proxy. The writer
// runs without its --in-cluster (no kubeconfig): it keeps the final
// reports in its store, which the scenarios read; startClusterReports runs
// it in its cluster mode.
func deployDev(t *testing.T, policies ...string) *devDeployment {
	t.Helper()
	dc := startDevCluster(t)
	dc.applyPolicies(t, policies...)
	cluster, cs, objs, overlay, dir, kubeconfig := dc.cluster, dc.cs, dc.objs, dc.overlay, dc.dir, dc.kubeconfig

	writerAddr, serverAddr, proxyAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	certFile, keyFile, ca := writeLoopbackCert(t, dir)
	args := func(component, kubeconfig string, set map[string]string) []string {
		a, err := deploy.Args(overlay, component, nil)
		if err != nil {
			t.Fatal(err)
		}
		return deploy.LocalArgs(a, kubeconfig, set)
	}
	startProcess(t, "reports", args("reports", "", map[string]string{
		"listen": writerAddr, "metrics-listen": "", "store": filepath.Join(dir, "reports.db"),
	}))
	startProcess(t, "server", args("server", kubeconfig, map[string]string{
		"listen": serverAddr, "metrics-listen": "", "report-writer": writerAddr,
	}))
	startProcess(t, "webhook", args("webhook", kubeconfig, map[string]string{
		"server": serverAddr, "listen": proxyAddr, "metrics-listen": "", "tls-cert": certFile, "tls-key": keyFile,
	}))

	c, err := client.Dial(serverAddr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	waitPoliciesReady(t, c, len(policies))

	// The manifests' validating webhooks, pointed at the proxy on loopback.
	registerValidatingWebhooks(t, cs, objs, proxyAddr, ca)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, _ := os.ReadFile(filepath.Join(cluster.Dir, "kube-apiserver.log"))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "verdict.io") {
				t.Logf("kube-apiserver: %s", l)
			}
		}
	})
	return &devDeployment{devCluster: dc, c: c, writerAddr: writerAddr, serverAddr: serverAddr, proxyAddr: proxyAddr, ca: ca}
}

// waitPoliciesReady waits until the decision server behind c serves at
// least n ready policies.
func waitPoliciesReady(t *testing.T, c *client.Client, n int) {
	t.Helper()
	poll(t, 30*time.Second, "the server serves the cluster's policies", func() error {
		ps, err := c.ListPolicies(t.Context())
		if err != nil {
			return err
		}
		ready := 0
		for _, p := range ps.GetPolicies() {
			if p.GetReady() {
				ready++
			}
		}
		if ready < n {
			return errf("policies %v", ps.GetPolicies())
		}
		return nil
	})
}

// registerValidatingWebhooks creates the ValidatingWebhookConfigurations
// of objs with every webhook pointed at the proxy on proxyAddr (trusting
// ca) and failing closed, whatever the overlay says: a matchCondition that
// does not evaluate then fails the request instead of skipping the
// webhook.
func registerValidatingWebhooks(t *testing.T, cs kubernetes.Interface, objs []*unstructured.Unstructured, proxyAddr string, ca []byte) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &vwc); err != nil {
			t.Fatal(err)
		}
		for i := range vwc.Webhooks {
			cc := &vwc.Webhooks[i].ClientConfig
			url := "https://" + proxyAddr + *cc.Service.Path
			cc.Service, cc.URL, cc.CABundle = nil, &url, ca
			fp := admissionregistrationv1.Fail
			vwc.Webhooks[i].FailurePolicy = &fp
		}
		vwc.ResourceVersion = ""
		if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), &vwc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// startProcess runs verdict with args in this process until the test
// ends; its output is printed when the test fails.
func startProcess(t *testing.T, name string, args []string) {
	t.Helper()
	t.Logf("verdict %s", strings.Join(args, " "))
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, out, out) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			t.Errorf("%s did not stop", name)
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, out.String())
		}
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func errf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// poll calls f until it returns nil or timeout passes.
func poll(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func writeE2EKubeconfig(t *testing.T, cluster *e2e.Cluster, path string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cluster.Config.BearerToken}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	cfg.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeLoopbackCert writes a self-signed certificate for 127.0.0.1 and its
// key into dir, and returns their paths and the certificate (the CA
// bundle).
func writeLoopbackCert(t *testing.T, dir string) (string, string, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "verdict-webhook e2e"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}
