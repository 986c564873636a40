package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/testing/protocmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.withDefaults()
	tests := []struct {
		name      string
		got, want any
	}{
		{"CacheSize", got.CacheSize, 1024},
		{"MaxMessageBytes", got.MaxMessageBytes, 4 << 20},
		{"CallTimeout", got.CallTimeout, 10 * time.Second},
		{"MaxConcurrentStreams", got.MaxConcurrentStreams, uint32(1024)},
		{"MaxBatchSize", got.MaxBatchSize, 1000},
		{"StreamWorkers", got.StreamWorkers, runtime.GOMAXPROCS(0)},
		{"ShutdownTimeout", got.ShutdownTimeout, 30 * time.Second},
		{"DrainDelay", got.DrainDelay, time.Duration(0)},
		{"MetricsMaxSeries", got.MetricsMaxSeries, 20000},
		{"InlineCacheBytes", got.InlineCacheBytes, int64(128 << 20)},
		{"MaxRequestPolicyBytes", got.MaxRequestPolicyBytes, 512 << 10},
		{"MaxRequestPolicyRules", got.MaxRequestPolicyRules, 256},
		{"Logger set", got.Logger != nil, true},
		{"Registry set", got.Registry != nil, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("Options{}.withDefaults().%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	set := Options{CacheSize: 7, CallTimeout: time.Second, MaxBatchSize: 3}.withDefaults()
	if set.CacheSize != 7 || set.CallTimeout != time.Second || set.MaxBatchSize != 3 {
		t.Errorf("withDefaults changed set fields: %+v", set)
	}
}

// inlineRequest evaluates obj against the team label policy sent inline.
func inlineRequest(obj []byte) *verdictv1.EvaluateRequest {
	return &verdictv1.EvaluateRequest{
		Object:   obj,
		Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(teamLabelPolicy)}}},
	}
}

func TestMaxMessageSize(t *testing.T) {
	ts := startServer(t, Options{MaxMessageBytes: 64 << 10})
	c := ts.client(t)
	big := strings.Repeat("x", 70<<10)
	tests := []struct {
		name     string
		give     []byte
		wantCode codes.Code
	}{
		{"under the limit", pod(t, "p", "default", "nginx", map[string]string{"team": "a"}), codes.OK},
		{"over the limit", pod(t, "p", "default", "nginx", map[string]string{"team": big}), codes.ResourceExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Evaluate(t.Context(), inlineRequest(tt.give))
			if code, _ := statusOf(err); code != tt.wantCode {
				t.Errorf("Evaluate(%d bytes) with a 64 KiB limit: code %v, want %v", len(tt.give), code, tt.wantCode)
			}
		})
	}
}

// hook returns an evalHook that blocks requests in namespace "block" until
// release is closed, panics for namespace "panic", and sleeps for "slow".
func hook(entered chan<- struct{}, release <-chan struct{}) func(*verdictv1.EvaluateRequest) {
	return func(req *verdictv1.EvaluateRequest) {
		switch req.GetNamespace() {
		case "block":
			if entered != nil {
				entered <- struct{}{}
			}
			<-release
		case "panic":
			panic("test panic")
		case "slow":
			time.Sleep(200 * time.Millisecond)
		}
	}
}

func requestIn(t *testing.T, namespace string) *verdictv1.EvaluateRequest {
	r := inlineRequest(pod(t, "p", "default", "nginx", map[string]string{"team": "a"}))
	r.Namespace = namespace
	return r
}

func TestCallDeadline(t *testing.T) {
	ts := startServer(t, Options{CallTimeout: 50 * time.Millisecond, evalHook: hook(nil, nil)})
	c := ts.client(t)
	tests := []struct {
		name     string
		give     string
		wantCode codes.Code
	}{
		{"fast call", "fast", codes.OK},
		{"call longer than CallTimeout", "slow", codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Evaluate(t.Context(), requestIn(t, tt.give))
			if code, _ := statusOf(err); code != tt.wantCode {
				t.Errorf("Evaluate(%s) with a 50ms CallTimeout: code %v, want %v", tt.give, code, tt.wantCode)
			}
		})
	}
	// A stream batch is bounded the same way, per item.
	stream, err := c.EvaluateStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	err = stream.Send(&verdictv1.EvaluateStreamRequest{Items: []*verdictv1.EvaluateStreamItem{{Id: "s", Request: requestIn(t, "slow")}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if got := outcomesOf(resp); len(got) != 1 || got[0].Code != codes.DeadlineExceeded {
		t.Errorf("slow stream item with a 50ms CallTimeout: %v, want DeadlineExceeded", got)
	}
}

func TestMaxConcurrentStreams(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	ts := startServer(t, Options{MaxConcurrentStreams: 1, evalHook: hook(entered, release)})
	c := ts.client(t)
	first := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(context.Background(), requestIn(t, "block"))
		first <- err
	}()
	<-entered
	// The only stream of the connection is taken: a second call waits for
	// it and runs out of time.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Evaluate(ctx, requestIn(t, "fast"))
	if code, _ := statusOf(err); code != codes.DeadlineExceeded {
		t.Errorf("second concurrent call with MaxConcurrentStreams 1: code %v, want DeadlineExceeded", code)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first call: %v", err)
	}
	if _, err := c.Evaluate(t.Context(), requestIn(t, "fast")); err != nil {
		t.Errorf("call after the first finished: %v", err)
	}
}

func TestPanicRecovery(t *testing.T) {
	ts := startServer(t, Options{evalHook: hook(nil, nil), StreamWorkers: 2})
	c := ts.client(t)
	_, err := c.Evaluate(t.Context(), requestIn(t, "panic"))
	if code, _ := statusOf(err); code != codes.Internal {
		t.Errorf("Evaluate with a panicking handler: code %v, want Internal", code)
	}
	if _, err := c.Evaluate(t.Context(), requestIn(t, "fine")); err != nil {
		t.Errorf("Evaluate after a panic: %v", err)
	}
	stream, err := c.EvaluateStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := stream.Send(&verdictv1.EvaluateStreamRequest{Items: []*verdictv1.EvaluateStreamItem{
			{Id: "p", Request: requestIn(t, "panic")},
			{Id: "ok", Request: requestIn(t, "fine")},
		}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv after a panicking item: %v", err)
		}
		want := []streamOutcome{{ID: "p", Code: codes.Internal}, {ID: "ok", Allowed: true}}
		if diff := cmp.Diff(want, outcomesOf(resp)); diff != "" {
			t.Errorf("batch with a panicking item mismatch (-want +got):\n%s", diff)
		}
	}
}

// gateSource reports its snapshot when open is closed.
type gateSource struct {
	open chan struct{}
}

func (g *gateSource) Name() string { return "gate" }

func (g *gateSource) Run(ctx context.Context, update func(Snapshot)) error {
	select {
	case <-g.open:
		update(Snapshot{Documents: []Document{{Origin: "gate", JSON: policyJSON(teamLabelPolicy)}}})
	case <-ctx.Done():
		return nil
	}
	<-ctx.Done()
	return nil
}

// policyJSON converts a YAML policy to JSON, panicking on error (for
// package-level test values).
func policyJSON(yamlDoc string) []byte {
	docs, err := fileDocuments("test", []byte(yamlDoc))
	if err != nil || len(docs) != 1 {
		panic(err)
	}
	return docs[0].JSON
}

// watchHealth collects the statuses a health Watch reports.
func watchHealth(t *testing.T, client healthpb.HealthClient) (<-chan healthpb.HealthCheckResponse_ServingStatus, <-chan error) {
	t.Helper()
	w, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil {
		t.Fatalf("health Watch: %v", err)
	}
	statuses, done := make(chan healthpb.HealthCheckResponse_ServingStatus, 16), make(chan error, 1)
	go func() {
		for {
			resp, err := w.Recv()
			if err != nil {
				close(statuses)
				done <- err
				return
			}
			statuses <- resp.GetStatus()
		}
	}()
	return statuses, done
}

func next(t *testing.T, statuses <-chan healthpb.HealthCheckResponse_ServingStatus) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	select {
	case s := <-statuses:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no health status within 10s")
		return 0
	}
}

func TestHealthTransitions(t *testing.T) {
	gate := &gateSource{open: make(chan struct{})}
	ts := startServer(t, Options{Sources: []PolicySource{gate}})
	conn := dial(t, ts.addr)
	statuses, done := watchHealth(t, healthpb.NewHealthClient(conn))
	if got := next(t, statuses); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("before the source reported: health %v, want NOT_SERVING", got)
	}
	c := verdictv1.NewDecisionServiceClient(conn)
	_, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil)})
	if code, _ := statusOf(err); code != codes.Unavailable {
		t.Errorf("Evaluate before the policies are loaded: code %v, want Unavailable", code)
	}
	close(gate.open)
	if got := next(t, statuses); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("after the source reported: health %v, want SERVING", got)
	}
	if _, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil)}); err != nil {
		t.Errorf("Evaluate when SERVING: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	if got := next(t, statuses); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("at shutdown: health %v, want NOT_SERVING", got)
	}
	// The watch ends so that it does not hold up the graceful stop.
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("health Watch still open 10s after shutdown")
	}
	if err := <-stopped; err != nil {
		t.Errorf("Run = %v, want nil after a shutdown", err)
	}
}

func TestGracefulDrain(t *testing.T) {
	entered, release := make(chan struct{}, 2), make(chan struct{})
	ts := startServer(t, Options{evalHook: hook(entered, release), DrainDelay: 100 * time.Millisecond})
	c := ts.client(t)

	// A unary call and a stream batch are in flight when shutdown starts.
	unary := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(context.Background(), requestIn(t, "block"))
		unary <- err
	}()
	stream, err := c.EvaluateStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&verdictv1.EvaluateStreamRequest{Items: []*verdictv1.EvaluateStreamItem{{Id: "b", Request: requestIn(t, "block")}}}); err != nil {
		t.Fatal(err)
	}
	<-entered
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()

	// During the drain delay health says NOT_SERVING.
	hc := healthpb.NewHealthClient(dial(t, ts.addr))
	eventually(t, func() string {
		resp, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{Service: ServiceName})
		if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			return "health still SERVING after shutdown started"
		}
		return ""
	})
	select {
	case err := <-stopped:
		t.Fatalf("Run returned (%v) with calls in flight", err)
	case <-time.After(200 * time.Millisecond):
	}

	close(release)
	if err := <-unary; err != nil {
		t.Errorf("unary call in flight at shutdown: %v, want it to finish", err)
	}
	resp, err := stream.Recv()
	if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetError() != nil {
		t.Errorf("stream batch in flight at shutdown: %v, %v; want its answer", resp, err)
	}
	_, err = stream.Recv()
	if code, _ := statusOf(err); code != codes.Unavailable {
		t.Errorf("stream after the batch in flight: %v, want Unavailable", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	_, err = c.Evaluate(t.Context(), requestIn(t, "fast"))
	if code, _ := statusOf(err); code != codes.Unavailable {
		t.Errorf("Evaluate after shutdown: code %v, want Unavailable", code)
	}
}

func TestShutdownTimeoutCancelsCalls(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	ts := startServer(t, Options{evalHook: hook(entered, release), ShutdownTimeout: 100 * time.Millisecond})
	c := ts.client(t)
	unary := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(context.Background(), requestIn(t, "block"))
		unary <- err
	}()
	<-entered
	start := time.Now()
	if err := ts.stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with a 100ms ShutdownTimeout", d)
	}
	if code, _ := statusOf(<-unary); code != codes.Unavailable && code != codes.Canceled {
		t.Errorf("call still running after ShutdownTimeout: code %v, want Unavailable or Canceled", code)
	}
}

func TestReflection(t *testing.T) {
	ts := startServer(t, Options{})
	conn := dial(t, ts.addr)
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatalf("ServerReflectionInfo: %v", err)
	}
	ask := func(req *reflectionpb.ServerReflectionRequest) *reflectionpb.ServerReflectionResponse {
		t.Helper()
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	var services []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
	}
	sort.Strings(services)
	want := []string{"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection", "verdict.v1.DecisionService"}
	if diff := cmp.Diff(want, services); diff != "" {
		t.Errorf("reflection ListServices mismatch (-want +got):\n%s", diff)
	}
	resp = ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "verdict.v1.DecisionService"}})
	if files := resp.GetFileDescriptorResponse().GetFileDescriptorProto(); len(files) == 0 {
		t.Errorf("reflection FileContainingSymbol(verdict.v1.DecisionService): no file descriptor (%v)", resp.GetErrorResponse())
	}
	resp = ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "verdict.v1.EvaluateRequest"}})
	if files := resp.GetFileDescriptorResponse().GetFileDescriptorProto(); len(files) == 0 {
		t.Errorf("reflection FileContainingSymbol(verdict.v1.EvaluateRequest): no file descriptor (%v)", resp.GetErrorResponse())
	}
}

// recordingSink is a publish.Sink that records the items offered.
type recordingSink struct {
	publish.Sink
	mu  sync.Mutex
	got []*verdictv1.ResourceEvaluation
}

func (s *recordingSink) Offer(items ...*verdictv1.PublishItem) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		s.got = append(s.got, it.GetEvaluation())
	}
	return nil
}

// TestReports checks the items offered to the report path: one per
// evaluation of the server's policies, none for inline policies.
func TestReports(t *testing.T) {
	sink := &recordingSink{}
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}, Reports: sink})
	c := ts.client(t)
	for _, name := range []string{"a", "b"} {
		req := &verdictv1.EvaluateRequest{Object: pod(t, name, "ns1", "nginx", nil), Operation: verdictv1.Operation_OPERATION_CREATE, Mode: verdictv1.Mode_MODE_BACKGROUND}
		if _, err := c.Evaluate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Evaluate(t.Context(), inlineRequest(pod(t, "inline", "ns1", "nginx", nil))); err != nil {
		t.Fatal(err)
	}
	type published struct {
		Resource *verdictv1.ObjectReference
		Source   verdictv1.ReportSource
		Op       verdictv1.Operation
		Complete bool
		Results  int
	}
	var got []published
	sink.mu.Lock()
	for _, e := range sink.got {
		got = append(got, published{e.GetResource(), e.GetSource(), e.GetOperation(), e.GetComplete(), len(e.GetResults())})
	}
	sink.mu.Unlock()
	want := []published{
		{&verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "ns1", Name: "a"}, verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND, verdictv1.Operation_OPERATION_CREATE, true, 1},
		{&verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "ns1", Name: "b"}, verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND, verdictv1.Operation_OPERATION_CREATE, true, 1},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("published evaluations mismatch (-want +got):\n%s", diff)
	}
}

// gatedApplier applies nothing until gate is closed.
type gatedApplier struct{ gate chan struct{} }

func (g gatedApplier) Apply(ctx context.Context, _ []*verdictv1.PublishItem) (publish.ApplyResult, error) {
	select {
	case <-g.gate:
		return publish.ApplyResult{}, nil
	case <-ctx.Done():
		return publish.ApplyResult{}, ctx.Err()
	}
}

// TestReportsOverflowNeverBlocks fills the queue of a real publisher whose
// writer does not apply anything: answers do not wait, and what the queue
// has no room for is counted as dropped.
func TestReportsOverflowNeverBlocks(t *testing.T) {
	applier := gatedApplier{gate: make(chan struct{})}
	const calls, buffer = 10, 2
	q, err := publish.NewLocal(applier, publish.Options{Buffer: buffer, MaxBatchItems: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(t.Context())
	defer close(applier.gate)
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}, Reports: q})
	c := ts.client(t)
	start := time.Now()
	for i := range calls {
		req := &verdictv1.EvaluateRequest{Object: pod(t, fmt.Sprintf("p%d", i), "ns1", "nginx", nil), Operation: verdictv1.Operation_OPERATION_CREATE}
		if _, err := c.Evaluate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%d calls with a blocked report writer took %v", calls, d)
	}
	// The writer holds one batch of one item; the queue holds buffer
	// items behind it. At most 1 + buffer get through.
	dropped := metricValue(t, ts.reg, "verdict_results_dropped_total")
	queued := metricValue(t, ts.reg, "verdict_results_published_total")
	if minDropped := float64(calls - (1 + buffer)); dropped+queued != calls || dropped < minDropped {
		t.Errorf("with a blocked writer and a buffer of %d: %v queued, %v dropped; want %d in all and at least %v dropped", buffer, queued, dropped, calls, minDropped)
	}
}

func TestRunFailsForMissingFolder(t *testing.T) {
	srv, err := New(Options{Sources: []PolicySource{&FolderSource{Dir: "/nonexistent/verdict"}}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Run(context.Background(), lis)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/verdict") {
		t.Errorf("Run with a missing policy folder = %v, want an error naming it", err)
	}
}

func TestEvaluateStreamClientCancel(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := c.EvaluateStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = stream.Recv()
	if code, _ := statusOf(err); code != codes.Canceled {
		t.Errorf("Recv after cancel: %v, want Canceled", err)
	}
	// The server is still fine.
	if _, err := c.Evaluate(t.Context(), requestIn(t, "fast")); err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("Evaluate after a cancelled stream: %v", err)
	}
}
