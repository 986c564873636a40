package scanner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/cases"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	"github.com/verdict-policy/verdict/scanner"
	"github.com/verdict-policy/verdict/server"
)

// policySource is a policy source whose documents a test can replace.
type policySource struct {
	mu      sync.Mutex
	docs    []server.Document
	updates chan []server.Document
}

func (s *policySource) Name() string { return "test" }

func (s *policySource) Run(ctx context.Context, update func(server.Snapshot)) error {
	s.mu.Lock()
	docs := s.docs
	s.mu.Unlock()
	update(server.Snapshot{Documents: docs})
	for {
		select {
		case d := <-s.updates:
			update(server.Snapshot{Documents: d})
		case <-ctx.Done():
			return nil
		}
	}
}

// documents converts YAML policies to server documents.
func documents(tb testing.TB, policies ...string) []server.Document {
	tb.Helper()
	var out []server.Document
	for i, p := range policies {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(p), &v); err != nil {
			tb.Fatalf("policy %d: %v", i, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, server.Document{Origin: "test.yaml", Line: i + 1, JSON: b})
	}
	return out
}

// testServer is a decision server on a loopback port.
type testServer struct {
	client   *client.Client
	registry *prometheus.Registry
	source   *policySource
}

// startServer runs a decision server holding policies until the test ends
// and returns a client connected to it, once it serves.
func startServer(tb testing.TB, policies ...string) *testServer {
	tb.Helper()
	return startServerWith(tb, server.Options{}, policies...)
}

// startServerWith is startServer with more server options (a Lookup).
func startServerWith(tb testing.TB, opts server.Options, policies ...string) *testServer {
	tb.Helper()
	src := &policySource{docs: documents(tb, policies...), updates: make(chan []server.Document)}
	reg := prometheus.NewRegistry()
	opts.Sources, opts.Registry = []server.PolicySource{src}, reg
	c := servertest.Dial(tb, servertest.Start(tb, opts), client.Options{})
	return &testServer{client: c, registry: reg, source: src}
}

// streamBatches is the number of EvaluateStream messages the server
// received.
func (ts *testServer) streamBatches(tb testing.TB) int {
	tb.Helper()
	mfs, err := ts.registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != "grpc_server_msg_received_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "grpc_method" && l.GetValue() == "EvaluateStream" {
					n += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return n
}

// collectSink keeps what a scan hands to its sink.
type collectSink struct {
	mu      sync.Mutex
	results []scanner.Result
	writes  int
	done    []scanner.ScanDone
}

func (s *collectSink) Write(_ context.Context, rs []scanner.Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.results = append(s.results, rs...)
	return nil
}

func (s *collectSink) ScanDone(_ context.Context, d scanner.ScanDone) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, d)
	return nil
}

// writeFiles writes files (name to content) into a new temp folder and
// returns it.
func writeFiles(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// teamLabelPolicy is the policy the tests of every service share
// (engine/cases).
var teamLabelPolicy = cases.RequireTeamLabel

// prodOnlyPolicy applies to Pods in namespaces labelled env=prod only.
const prodOnlyPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: prod-no-latest
spec:
  rules:
  - name: no-latest
    match:
      any:
      - resources:
          kinds: [Pod]
          namespaceSelector:
            matchLabels:
              env: prod
    validate:
      message: "latest is not allowed in prod."
      pattern:
        spec:
          containers:
          - image: "!*:latest"
`

// adminOnlyPolicy reads request.userInfo: it is admission only.
const adminOnlyPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: admins-only
spec:
  background: false
  rules:
  - name: admins
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "only admins."
      deny:
        conditions:
          any:
          - key: "{{ request.userInfo.username }}"
            operator: NotEquals
            value: admin
`
