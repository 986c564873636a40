package kubeconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/verdict-policy/verdict/internal/kubeconfig"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: one
  context: {cluster: c, user: u}
- name: two
  context: {cluster: c, user: u}
current-context: one
`
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, context := range []string{"", "two"} {
		got, err := kubeconfig.Load(file, context, false, "verdict-test")
		if err != nil {
			t.Fatalf("Load(%s, %q) = %v", file, context, err)
		}
		if got.Host != "https://127.0.0.1:6443" || got.UserAgent != "verdict-test" {
			t.Errorf("Load(%s, %q) = host %q, user agent %q; want https://127.0.0.1:6443, verdict-test", file, context, got.Host, got.UserAgent)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		name       string
		kubeconfig string
		context    string
		inCluster  bool
	}{
		{name: "neither"},
		{name: "both", kubeconfig: file, inCluster: true},
		{name: "missing file", kubeconfig: filepath.Join(dir, "missing")},
		{name: "unknown context", kubeconfig: file, context: "three"},
		{name: "in-cluster outside a cluster", inCluster: true},
	}
	for _, tt := range tests {
		if _, err := kubeconfig.Load(tt.kubeconfig, tt.context, tt.inCluster, "verdict-test"); err == nil {
			t.Errorf("Load(%s) = nil error, want one", tt.name)
		}
	}
}
