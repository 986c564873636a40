package client_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/cases"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// staticSource is a policy source that reports fixed documents once.
type staticSource struct {
	name string
	docs []server.Document
}

func (s *staticSource) Name() string { return s.name }

func (s *staticSource) Run(ctx context.Context, update func(server.Snapshot)) error {
	update(server.Snapshot{Documents: s.docs})
	<-ctx.Done()
	return nil
}

// policySource holds the given YAML policy files.
func policySource(tb testing.TB, files ...string) *staticSource {
	tb.Helper()
	src := &staticSource{name: "test"}
	for i, f := range files {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(f), &v); err != nil {
			tb.Fatalf("policy %d: %v", i, err)
		}
		src.docs = append(src.docs, server.Document{Origin: "test.yaml", Line: i + 1, JSON: mustJSON(tb, v)})
	}
	return src
}

// startServer runs a decision server with opts on a loopback port until
// the test ends and returns its address.
func startServer(tb testing.TB, opts server.Options) string {
	tb.Helper()
	return servertest.Start(tb, opts)
}

// dial returns a Client for target, closed when the test ends.
func dial(tb testing.TB, target string, opts client.Options) *client.Client {
	tb.Helper()
	c, err := client.Dial(target, opts)
	if err != nil {
		tb.Fatalf("Dial(%s): %v", target, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// waitServing waits until c's server reports SERVING.
func waitServing(tb testing.TB, c *client.Client) {
	tb.Helper()
	servertest.WaitServing(tb, c)
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// pod returns a Pod with one container running image.
func pod(name, image string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": name, "namespace": "shop", "labels": labels},
		"spec":       map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}},
	}
}

// The policies the tests of every service share (engine/cases).
var (
	teamLabelPolicy = cases.RequireTeamLabel
	latestTagPolicy = cases.DisallowLatestTag
)

// fakeServer is a DecisionService whose methods the test supplies, with
// the standard health service.
type fakeServer struct {
	verdictv1.UnimplementedDecisionServiceServer
	evaluate func(context.Context, *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error)
	stream   func(verdictv1.DecisionService_EvaluateStreamServer) error
	health   *health.Server
	addr     string
	stop     func()
}

func (f *fakeServer) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
	return f.evaluate(ctx, req)
}

func (f *fakeServer) EvaluateStream(s verdictv1.DecisionService_EvaluateStreamServer) error {
	return f.stream(s)
}

// startFake serves f on a loopback port until the test ends (or f.stop).
func startFake(tb testing.TB, f *fakeServer) *fakeServer {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	g := grpc.NewServer()
	verdictv1.RegisterDecisionServiceServer(g, f)
	f.health = health.NewServer()
	f.health.SetServingStatus(verdictv1.DecisionService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, f.health)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(lis)
	}()
	f.addr = lis.Addr().String()
	f.stop = func() {
		g.Stop()
		<-done
	}
	tb.Cleanup(f.stop)
	return f
}
