//go:build e2e

package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/e2e"
	"github.com/verdict-policy/verdict/server"
)

// netpolPolicy generates a NetworkPolicy in every Namespace labelled
// netpol=default, for existing Namespaces too.
const netpolPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: default-deny
spec:
  generateExisting: true
  rules:
  - name: deny-all
    match:
      any:
      - resources:
          kinds: [Namespace]
          selector:
            matchLabels:
              netpol: default
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: default-deny
      namespace: "{{request.object.metadata.name}}"
      data:
        spec:
          podSelector: {}
          policyTypes: [Ingress]
`

// TestE2EScanCommand runs verdict scan --kubeconfig as a user would,
// against a real API server.
func TestE2EScanCommand(t *testing.T) {
	cluster := e2e.Start(t, e2e.Options{})
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cluster.Config.BearerToken}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	cfg.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"netpol": "default"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies")
	if err := os.Mkdir(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policies, "netpol.yaml"), []byte(netpolPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startServerWith(t, server.Options{Sources: []server.PolicySource{&server.FolderSource{Dir: policies}}})

	code, out, errOut := runCmd(t, "scan", "--server", addr, "--kubeconfig", kubeconfig, "--page-size", "2")
	if code != 0 {
		t.Fatalf("verdict scan --kubeconfig = exit %d; stderr:\n%s", code, errOut)
	}
	for _, w := range []string{"Scanned 5 resource(s) in background mode (shard 0/1)...", "generateExisting: 1 resource(s) applied for 1 trigger(s)", "pass: 0, fail: 0, warn: 0, error: 0, skip: 0"} {
		if !strings.Contains(out, w) {
			t.Errorf("verdict scan --kubeconfig output lacks %q:\n%s", w, out)
		}
	}
	np, err := cs.NetworkingV1().NetworkPolicies("shop").Get(ctx, "default-deny", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("generated NetworkPolicy: %v", err)
	}
	if np.Labels["kyverno.io/background-gen-rule"] != "deny-all" {
		t.Errorf("NetworkPolicy labels = %v, want kyverno.io/background-gen-rule=deny-all", np.Labels)
	}
	// Again: nothing to generate.
	code, out, errOut = runCmd(t, "scan", "--server", addr, "--kubeconfig", kubeconfig)
	if code != 0 || strings.Contains(out, "generateExisting:") {
		t.Errorf("second verdict scan = exit %d, output:\n%s\nstderr:\n%s\nwant exit 0 and nothing generated", code, out, errOut)
	}
}

// startServerWith runs a decision server with opts on a loopback port
// until the test ends and returns its address once it serves.
func startServerWith(t *testing.T, opts server.Options) string {
	t.Helper()
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server Run() = %v", err)
		}
	})
	addr := lis.Addr().String()
	c, err := client.Dial(addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.CheckHealth(t.Context()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("server not SERVING after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return addr
}
