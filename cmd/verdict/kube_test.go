package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeKubernetesFlags(t *testing.T) {
	// A kubeconfig whose API server refuses connections: the source's
	// first list fails, and with it serve.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := lis.Addr().String()
	lis.Close()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://` + refused + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		give    []string
		wantErr string
	}{
		{name: "unreachable cluster", give: []string{"--kubeconfig", kubeconfig}, wantErr: "policy source kubernetes: list clusterpolicies.kyverno.io"},
		{name: "missing kubeconfig", give: []string{"--kubeconfig", kubeconfig + ".missing"}, wantErr: "kubernetes client configuration"},
		{name: "kubeconfig and in-cluster", give: []string{"--kubeconfig", kubeconfig, "--in-cluster"}, wantErr: "exclusive"},
		{name: "context without kubeconfig", give: []string{"--context", "c"}, wantErr: "need --kubeconfig or --in-cluster"},
		{name: "exception namespace without kubeconfig", give: []string{"--exception-namespace", "x"}, wantErr: "need --kubeconfig or --in-cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--log-level", "error"}, tt.give...)
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), args, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("serve %v = exit %d, stderr %q; want exit %d, stderr containing %q", tt.give, code, stderr.String(), exitUsage, tt.wantErr)
			}
		})
	}
}
