package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// podItems yields n Pod requests with ids "pod-0".."pod-n-1"; every third
// Pod lacks the team label. It counts the items taken in *taken.
func podItems(tb testing.TB, n int, taken *atomic.Int64) iter.Seq[client.Item] {
	return func(yield func(client.Item) bool) {
		for i := range n {
			labels := map[string]any{"team": "a"}
			if i%3 == 0 {
				labels = nil
			}
			req, err := client.NewRequest(pod(fmt.Sprintf("p%d", i), "nginx:1", labels))
			if err != nil {
				tb.Error(err)
				return
			}
			if taken != nil {
				taken.Add(1)
			}
			if !yield(client.Item{ID: fmt.Sprintf("pod-%d", i), Request: req}) {
				return
			}
		}
	}
}

func TestScan(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)

	tests := []struct {
		name string
		n    int
		opts client.ScanOptions
	}{
		{name: "no items", n: 0},
		{name: "one partial batch", n: 7},
		{name: "several batches", n: 250, opts: client.ScanOptions{BatchSize: 100}},
		{name: "batches of one", n: 20, opts: client.ScanOptions{BatchSize: 1, MaxInFlight: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want, got []string
			for i := range tt.n {
				want = append(want, fmt.Sprintf("pod-%d allowed=%v policies=[require-team-label] indexes=0", i, i%3 != 0))
			}
			err := c.Scan(t.Context(), podItems(t, tt.n, nil), func(r client.Result) error {
				if r.Err != nil {
					return r.Err
				}
				// The policy versions travel once per batch; each result
				// has its own back.
				var names []string
				for _, p := range r.Response.GetPolicies() {
					names = append(names, p.GetName())
				}
				got = append(got, fmt.Sprintf("%s allowed=%v policies=%v indexes=%d", r.ID, r.Response.GetAllowed(), names, len(r.Response.GetPolicyIndexes())))
				return nil
			}, tt.opts)
			if err != nil {
				t.Fatalf("Scan() = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Scan() results mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanItemErrors(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	good, err := client.NewRequest(pod("p", "nginx", map[string]any{"team": "a"}))
	if err != nil {
		t.Fatal(err)
	}
	items := []client.Item{
		{ID: "good", Request: good},
		{ID: "no-request"},
		{ID: "not-json", Request: &verdictv1.EvaluateRequest{Object: []byte("{not json")}},
		{ID: "unknown-policy", Request: &verdictv1.EvaluateRequest{Object: good.GetObject(), Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Names: []string{"nope"}}}}},
		{ID: "good-again", Request: good},
	}
	type row struct {
		ID     string
		Code   codes.Code
		Fields []string
	}
	want := []row{
		{ID: "good", Code: codes.OK},
		{ID: "no-request", Code: codes.InvalidArgument, Fields: []string{"items[1].request"}},
		{ID: "not-json", Code: codes.InvalidArgument, Fields: []string{"items[2].request.object"}},
		{ID: "unknown-policy", Code: codes.NotFound, Fields: []string{"items[3].request.policy_selector.names[0]"}},
		{ID: "good-again", Code: codes.OK},
	}
	var got []row
	err = c.Scan(t.Context(), sliceSeq(items), func(r client.Result) error {
		rw := row{ID: r.ID, Code: status.Code(r.Err)}
		for _, v := range client.FieldViolations(r.Err) {
			rw.Fields = append(rw.Fields, v.GetField())
		}
		if (r.Err == nil) == (r.Response == nil) {
			t.Errorf("result %s: Err %v and Response %v, want exactly one", r.ID, r.Err, r.Response)
		}
		got = append(got, rw)
		return nil
	}, client.ScanOptions{})
	if err != nil {
		t.Fatalf("Scan() = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan() results mismatch (-want +got):\n%s", diff)
	}
}

func sliceSeq[T any](s []T) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, v := range s {
			if !yield(v) {
				return
			}
		}
	}
}

func TestScanBackPressure(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	const batch, inFlight, n = 10, 2, 10_000
	var taken atomic.Int64
	first := make(chan struct{})
	release := make(chan struct{})
	results := 0
	done := make(chan error, 1)
	go func() {
		done <- c.Scan(t.Context(), podItems(t, n, &taken), func(r client.Result) error {
			if results == 0 {
				close(first)
				<-release // a slow consumer
			}
			results++
			return nil
		}, client.ScanOptions{BatchSize: batch, MaxInFlight: inFlight})
	}()
	<-first
	time.Sleep(200 * time.Millisecond) // time for a producer that ignores flow control to run ahead
	// In flight: inFlight batches; one batch being filled; one item held
	// by the producer.
	if got, limit := taken.Load(), int64(batch*(inFlight+1)+1); got > limit {
		t.Errorf("with the consumer blocked, %d items were taken from the iterator, want at most %d", got, limit)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Scan() = %v", err)
	}
	if results != n {
		t.Errorf("Scan() delivered %d results, want %d", results, n)
	}
}

func TestScanCancel(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	var taken atomic.Int64
	results := 0
	err := c.Scan(ctx, podItems(t, 1_000_000, &taken), func(client.Result) error {
		results++
		if results == 150 {
			cancel()
		}
		return nil
	}, client.ScanOptions{BatchSize: 50})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Scan() = %v, want context.Canceled", err)
	}
	// Scan waits for the iterator to stop: nothing is taken afterwards.
	after := taken.Load()
	time.Sleep(50 * time.Millisecond)
	if got := taken.Load(); got != after || got > 1000 {
		t.Errorf("items taken: %d when Scan returned, %d later; want no change and far fewer than 1e6", after, got)
	}
}

func TestScanResultFunctionError(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	stop := errors.New("stop")
	results := 0
	err := c.Scan(t.Context(), podItems(t, 500, nil), func(client.Result) error {
		results++
		if results == 42 {
			return stop
		}
		return nil
	}, client.ScanOptions{BatchSize: 20})
	if !errors.Is(err, stop) {
		t.Errorf("Scan() = %v, want the result function's error", err)
	}
	if results != 42 {
		t.Errorf("result function called %d times, want 42", results)
	}
}

func TestScanBatchOverServerLimit(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}, MaxBatchSize: 10})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	err := c.Scan(t.Context(), podItems(t, 50, nil), func(client.Result) error { return nil }, client.ScanOptions{BatchSize: 20})
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Errorf("Scan() = %v, want RESOURCE_EXHAUSTED", err)
	}
}

// TestScanReconnect has a server that answers one batch per stream and
// then ends the stream with UNAVAILABLE, as a draining server does: the
// scan goes on over new streams and every result arrives once, in order.
func TestScanReconnect(t *testing.T) {
	var streams atomic.Int32
	f := startFake(t, &fakeServer{stream: func(s verdictv1.DecisionService_EvaluateStreamServer) error {
		streams.Add(1)
		b, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(answer(b)); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "shutting down")
	}})
	c := dial(t, f.addr, client.Options{WaitForReady: true})
	var got, want []string
	for i := range 45 {
		want = append(want, fmt.Sprintf("pod-%d", i))
	}
	err := c.Scan(t.Context(), podItems(t, 45, nil), func(r client.Result) error {
		if r.Err != nil {
			return r.Err
		}
		got = append(got, r.ID)
		return nil
	}, client.ScanOptions{BatchSize: 10, MaxInFlight: 3})
	if err != nil {
		t.Fatalf("Scan() = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan() ids mismatch (-want +got):\n%s", diff)
	}
	if n := streams.Load(); n < 5 {
		t.Errorf("server saw %d streams, want at least 5 (one per batch)", n)
	}
}

func TestScanReconnectsRunOut(t *testing.T) {
	var streams atomic.Int32
	f := startFake(t, &fakeServer{stream: func(s verdictv1.DecisionService_EvaluateStreamServer) error {
		streams.Add(1)
		return status.Error(codes.Unavailable, "never ready")
	}})
	c := dial(t, f.addr, client.Options{WaitForReady: true})
	err := c.Scan(t.Context(), podItems(t, 5, nil), func(client.Result) error { return nil }, client.ScanOptions{MaxReconnects: 2})
	if got := status.Code(err); got != codes.Unavailable {
		t.Errorf("Scan() = %v, want UNAVAILABLE", err)
	}
	if got := streams.Load(); got != 3 {
		t.Errorf("server saw %d streams, want 3 (one and two reconnects)", got)
	}
}

func TestScanMismatchedAnswer(t *testing.T) {
	tests := []struct {
		name   string
		change func(*verdictv1.EvaluateStreamResponse)
	}{
		{"another id", func(r *verdictv1.EvaluateStreamResponse) { r.Results[0].Id = "other" }},
		{"a policy version the batch does not have", func(r *verdictv1.EvaluateStreamResponse) {
			r.Policies = []*verdictv1.PolicyVersion{{Name: "p"}}
			r.Results[0].GetResponse().PolicyIndexes = []uint32{1}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, &fakeServer{stream: func(s verdictv1.DecisionService_EvaluateStreamServer) error {
				b, err := s.Recv()
				if err != nil {
					return err
				}
				if !b.GetSharedPolicyVersions() {
					t.Errorf("Scan() sent a batch without shared_policy_versions")
				}
				resp := answer(b)
				tt.change(resp)
				if err := s.Send(resp); err != nil {
					return err
				}
				<-s.Context().Done()
				return nil
			}})
			c := dial(t, f.addr, client.Options{WaitForReady: true})
			err := c.Scan(t.Context(), podItems(t, 3, nil), func(client.Result) error { return nil }, client.ScanOptions{})
			if err == nil || status.Code(err) != codes.Unknown {
				t.Errorf("Scan() = %v, want an error about the answer", err)
			}
		})
	}
}

// answer allows every item of b.
func answer(b *verdictv1.EvaluateStreamRequest) *verdictv1.EvaluateStreamResponse {
	out := &verdictv1.EvaluateStreamResponse{}
	for _, it := range b.GetItems() {
		out.Results = append(out.Results, &verdictv1.EvaluateStreamResult{
			Id:      it.GetId(),
			Outcome: &verdictv1.EvaluateStreamResult_Response{Response: &verdictv1.EvaluateResponse{Allowed: true}},
		})
	}
	return out
}
