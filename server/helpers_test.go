package server

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/verdict-policy/verdict/engine/cases"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// testServer is a Server running on a loopback TCP port.
type testServer struct {
	addr     string
	srv      *Server
	reg      *prometheus.Registry
	cancel   context.CancelFunc
	done     chan struct{}
	runErr   error
	stopOnce sync.Once
}

// startServer runs a Server with opts on 127.0.0.1:0 until the test ends.
func startServer(t testing.TB, opts Options) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{addr: lis.Addr().String(), srv: srv, reg: opts.Registry, cancel: cancel, done: make(chan struct{})}
	go func() {
		ts.runErr = srv.Run(ctx, lis)
		close(ts.done)
	}()
	t.Cleanup(func() { ts.stop() })
	return ts
}

// stop cancels Run and returns its error.
func (ts *testServer) stop() error {
	ts.stopOnce.Do(ts.cancel)
	<-ts.done
	return ts.runErr
}

// dial connects to addr in plain text, or with extra options.
func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatalf("grpc.NewClient(%s): %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// client dials ts and waits until it reports SERVING.
func (ts *testServer) client(t *testing.T) verdictv1.DecisionServiceClient {
	t.Helper()
	conn := dial(t, ts.addr)
	waitServing(t, conn)
	return verdictv1.NewDecisionServiceClient(conn)
}

func waitServing(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	h := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{Service: ServiceName})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not SERVING after 10s: %v, %v", resp.GetStatus(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventually retries check until it returns "" or 10s pass; then it fails
// the test with the last message.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write and rename, as editors and ConfigMap volumes do, so the poller
	// never reads half a file.
	tmp := filepath.Join(dir, "."+filepath.Base(name)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// policyFolder returns a folder holding files, polled every 20ms.
func policyFolder(t *testing.T, files map[string]string) (string, *FolderSource) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	return dir, &FolderSource{Dir: dir, Interval: 20 * time.Millisecond}
}

// metricValue returns the sum of the samples of a counter or gauge.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pod returns a Pod with one container running image, as JSON.
func pod(t *testing.T, name, namespace, image string, labels map[string]string) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": labels},
		"spec":       map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}},
	})
}

// Test policies.
var (
	nsPurposePolicy = bt(`apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-ns-purpose-label
spec:
  rules:
    - name: require-ns-purpose-label
      match:
        any:
          - resources:
              kinds:
                - Namespace
      validate:
        failureAction: Enforce
        message: 'You must have label BTpurposeBT with value BTproductionBT set on all new namespaces.'
        pattern:
          metadata:
            labels:
              purpose: production
`)
	// The policies the tests of every service share (engine/cases).
	teamLabelPolicy = cases.RequireTeamLabel
	latestTagPolicy = cases.DisallowLatestTag
)

// protectDeletePolicy denies the DELETE of Pods labelled protected=true.
const protectDeletePolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: protect-pods
spec:
  validationFailureAction: Enforce
  rules:
  - name: protect
    match:
      any:
      - resources:
          kinds: [Pod]
          operations: [DELETE]
    validate:
      message: "Pod {{ request.oldObject.metadata.name }} is protected."
      deny:
        conditions:
          any:
          - key: "{{ request.oldObject.metadata.labels.protected || '' }}"
            operator: Equals
            value: "true"
`

// bt replaces BT by a backtick, which raw strings cannot hold.
func bt(s string) string { return strings.ReplaceAll(s, "BT", "`") }
