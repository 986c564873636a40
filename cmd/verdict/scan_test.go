package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/client-go/rest"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
	"github.com/verdict-policy/verdict/server"
)

func TestScanFiles(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // lines of stdout, in order
	}{
		{
			name:     "violations then counts",
			args:     []string{"scan", "--server", addr, "-f", exampleResources},
			wantCode: 0,
			wantOut: []string{
				"Scanned 3 resource(s) in background mode (shard 0/1)...",
				"policy disallow-latest-tag -> resource shop/Pod/debug failed:",
				"policy require-requests-limits -> resource shop/Deployment/api failed:",
				"pass: 8, fail: 4, warn: 0, error: 0, skip: 0",
			},
		},
		{
			name:     "fail on violation",
			args:     []string{"scan", "--server", addr, "--files", exampleResources, "--fail-on-violation"},
			wantCode: 1,
			wantOut:  []string{"pass: 8, fail: 4, warn: 0, error: 0, skip: 0"},
		},
		{
			name:     "a shard scans part",
			args:     []string{"scan", "--server", addr, "-f", exampleResources, "--shard", "0/2"},
			wantCode: 0,
			wantOut:  []string{"Scanned 0 resource(s) in background mode (shard 0/2)...", "pass: 0, fail: 0, warn: 0, error: 0, skip: 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("verdict %v = exit %d, want %d; stderr:\n%s", tt.args, code, tt.wantCode, errOut)
			}
			rest := out
			for _, w := range tt.wantOut {
				i := strings.Index(rest, w+"\n")
				if i < 0 {
					t.Errorf("verdict %v output lacks %q (in order); output:\n%s", tt.args, w, out)
					break
				}
				rest = rest[i+len(w):]
			}
			// Not a terminal: no progress.
			if strings.Contains(errOut, "scanned ") {
				t.Errorf("verdict %v printed progress on a non-terminal stderr:\n%s", tt.args, errOut)
			}
		})
	}
}

func TestScanJSON(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	code, out, errOut := runCmd(t, "scan", "--server", addr, "-f", exampleResources, "-o", "json", "--progress", "always")
	if code != 0 {
		t.Fatalf("verdict scan -o json = exit %d; stderr:\n%s", code, errOut)
	}
	var got []struct {
		Resource string `json:"resource"`
		Source   string `json:"source"`
		Response struct {
			Results []struct {
				Result string `json:"result"`
			} `json:"results"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("verdict scan -o json printed no JSON list: %v\n%s", err, out)
	}
	var resources []string
	for _, g := range got {
		resources = append(resources, g.Resource)
	}
	if diff := cmp.Diff([]string{"shop/Pod/web", "shop/Pod/debug", "shop/Deployment/api"}, resources); diff != "" {
		t.Errorf("verdict scan -o json resources mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(errOut, "scanned 3/3 resources (") {
		t.Errorf("verdict scan --progress always: stderr %q lacks the progress line", errOut)
	}
}

func TestScanUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no source", []string{"scan"}, "give one of -f/--files, --kubeconfig or --in-cluster"},
		{"two sources", []string{"scan", "-f", dir, "--in-cluster"}, "give one of"},
		{"bad shard", []string{"scan", "-f", dir, "--shard", "2/2"}, "--shard: shard \"2/2\": index 2: want 0 to 1"},
		{"bad output", []string{"scan", "-f", dir, "-o", "wide"}, "invalid output format \"wide\""},
		{"bad batch", []string{"scan", "-f", dir, "--batch-size", "0"}, "--batch-size, --max-in-flight and --page-size must be positive"},
		{"bad file", []string{"scan", "-f", bad}, "bad.yaml:5: not a Kubernetes object: no apiVersion, metadata.name"},
		{"watch files", []string{"scan", "-f", dir, "--watch"}, "--watch needs a cluster (--kubeconfig or --in-cluster), not files"},
		{"bad watch delay", []string{"scan", "--in-cluster", "--watch", "--watch-delay", "0"}, "--watch-delay and --watch-batch must be positive"},
		{"bad watch batch", []string{"scan", "--in-cluster", "--watch", "--watch-batch", "-1"}, "--watch-delay and --watch-batch must be positive"},
		{"bad kube qps", []string{"scan", "--kubeconfig", kubeconfig, "--kube-qps", "0"}, "--kube-qps and --kube-burst must be positive"},
		{"bad metrics address", []string{"scan", "-f", dir, "--metrics-listen", "127.0.0.1:-1"}, "--metrics-listen:"},
		{"no server", []string{"scan", "-f", filepath.Join("..", "..", "examples", "resources"), "--server", "127.0.0.1:1"}, "scan on 127.0.0.1:1: Unavailable: list policies:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("verdict %v = exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, exitUsage, tt.wantErr)
			}
		})
	}
}

// startReportWriter runs a report writer on an embedded store behind a
// gRPC server on a loopback port until the test ends.
func startReportWriter(t *testing.T) (string, verdictv1.ReportServiceClient) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "reports.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := reportwriter.New(reportwriter.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	verdictv1.RegisterReportServiceServer(srv, w)
	go srv.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		w.Close(context.Background())
		st.Close()
	})
	return lis.Addr().String(), verdictv1.NewReportServiceClient(conn)
}

func TestScanReportWriter(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	rwAddr, rw := startReportWriter(t)
	code, out, errOut := runCmd(t, "scan", "--server", addr, "-f", exampleResources, "--report-writer", rwAddr)
	if code != 0 {
		t.Fatalf("verdict scan --report-writer = exit %d; stderr:\n%s", code, errOut)
	}
	if out != "" || !strings.Contains(errOut, "scanned 3 resources of shard 0/1 in ") {
		t.Errorf("verdict scan --report-writer printed stdout %q, stderr %q; want only the summary on stderr", out, errOut)
	}
	// The writer acknowledged everything before the command returned.
	list, err := rw.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range list.GetReports() {
		s := r.GetSummary()
		got[r.GetNamespace()+"/"+r.GetName()] = fmt.Sprintf("pass %d fail %d", s.GetPass(), s.GetFail())
	}
	want := map[string]string{
		"shop/cpol-disallow-latest-tag":     "pass 5 fail 1",
		"shop/cpol-require-requests-limits": "pass 1 fail 2",
		"shop/cpol-require-team-label":      "pass 2 fail 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports after verdict scan mismatch (-want +got):\n%s", diff)
	}
}

func TestKubeRateFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantQPS   float32
		wantBurst int
	}{
		{"defaults, Kyverno's", nil, 100, 200},
		{"set", []string{"--kube-qps", "20", "--kube-burst", "40"}, 20, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k kubeRateFlags
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			k.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg := &rest.Config{}
			if err := k.apply(cfg); err != nil {
				t.Fatalf("apply(%v) = %v", tt.args, err)
			}
			if cfg.QPS != tt.wantQPS || cfg.Burst != tt.wantBurst {
				t.Errorf("apply(%v): QPS %v, burst %d; want %v, %d", tt.args, cfg.QPS, cfg.Burst, tt.wantQPS, tt.wantBurst)
			}
		})
	}
	code, _, errOut := runCmd(t, "reports", "serve", "--kube-qps", "5")
	if code != exitUsage || !strings.Contains(errOut, "--kube-qps needs --kubeconfig or --in-cluster") {
		t.Errorf("verdict reports serve --kube-qps 5 = exit %d, stderr %q; want a usage error", code, errOut)
	}
}
