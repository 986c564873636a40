package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/grpccodec"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// snapshotSource reports one snapshot and waits.
type snapshotSource struct{ docs []Document }

func (s *snapshotSource) Name() string { return "corpus" }

func (s *snapshotSource) Run(ctx context.Context, update func(Snapshot)) error {
	update(Snapshot{Documents: s.docs})
	<-ctx.Done()
	return nil
}

// streamBatchSize is the batch of BenchmarkStreamStages, as the
// client's BenchmarkEvaluateStream/batch=500.
const streamBatchSize = 500

// BenchmarkStreamStages splits the server's work on an EvaluateStream
// batch into its stages, each run alone in one goroutine on the batch of
// BenchmarkEvaluateStream (500 times the engine benchmark's Pod, background
// mode, the pod-security and best-practices policies of the corpus): one
// op is one batch, ns/item the time per resource. Under callgrind, the
// instructions of a stage per resource are those of two runs of different
// b.N, subtracted, divided by the difference in items. It skips when the
// corpus is absent.
func BenchmarkStreamStages(b *testing.B) {
	var src snapshotSource
	for _, f := range []string{"pod-security", "best-practices"} {
		dir, ok := testcorpus.Corpus(f)
		if !ok {
			b.Skipf("corpus not present at %s", dir)
		}
		files, err := testcorpus.ClusterPolicies(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, file := range files {
			var doc map[string]any
			if err := yaml.Unmarshal(file.Data, &doc); err != nil {
				b.Fatal(err)
			}
			js, err := json.Marshal(doc)
			if err != nil {
				b.Fatal(err)
			}
			src.docs = append(src.docs, Document{Origin: file.Path, Line: 1, JSON: js})
		}
	}
	// No deadline for a batch: under callgrind a batch takes minutes.
	ts := startServer(b, Options{Sources: []PolicySource{&src}, CallTimeout: 24 * time.Hour})
	s := ts.srv
	select {
	case <-s.store.Ready():
	case <-time.After(time.Minute):
		b.Fatal("policies not loaded")
	}
	data, err := os.ReadFile("../engine/testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := yaml.YAMLToJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	batch := &verdictv1.EvaluateStreamRequest{SharedPolicyVersions: true}
	for i := range streamBatchSize {
		batch.Items = append(batch.Items, &verdictv1.EvaluateStreamItem{
			Id:      fmt.Sprint(i),
			Request: &verdictv1.EvaluateRequest{Object: obj, Mode: verdictv1.Mode_MODE_BACKGROUND},
		})
	}
	wire, err := batch.MarshalVT()
	if err != nil {
		b.Fatal(err)
	}
	serverCodec, clientCodec := grpccodec.New(false), grpccodec.New(true)
	decodeBatch := func(b *testing.B) *verdictv1.EvaluateStreamRequest {
		var req verdictv1.EvaluateStreamRequest
		if err := serverCodec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, &req); err != nil {
			b.Fatal(err)
		}
		return &req
	}
	ctx := context.Background()
	items := decodeBatch(b).GetItems()
	answer := s.evaluateBatch(ctx, items)
	for i, r := range answer.GetResults() {
		if r.GetResponse() == nil {
			b.Fatalf("item %d: %v", i, r.GetError())
		}
	}
	// shared is the answer as sent: each item's response names its
	// policies by index (sharePolicyVersions changes the results).
	shared := func() *verdictv1.EvaluateStreamResponse {
		a := &verdictv1.EvaluateStreamResponse{Results: make([]*verdictv1.EvaluateStreamResult, len(answer.Results))}
		for i, r := range answer.Results {
			a.Results[i] = &verdictv1.EvaluateStreamResult{Id: r.Id, Outcome: r.Outcome}
		}
		sharePolicyVersions(a)
		return a
	}
	answerWire, err := shared().MarshalVT()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d policies, %d results per Pod, %d request bytes and %d answer bytes per Pod",
		len(src.docs), len(answer.GetResults()[0].GetResponse().GetResults()), len(wire)/streamBatchSize, len(answerWire)/streamBatchSize)
	set := s.store.current()
	policies, err := set.selectPolicies(nil)
	if err != nil {
		b.Fatal(err)
	}
	// The engine's request of each item, and its results.
	evalReq, err := requestFromProto(items[0].GetRequest())
	if err != nil {
		b.Fatal(err)
	}
	evalReq.Exceptions, evalReq.CELExceptions, evalReq.VAPBindings = set.exceptions, set.celExceptions, set.vapBindings
	evalRes := s.runEngine(ctx, policies, evalReq)
	groups := groupResults(policies, evalRes.Results)

	perItem := func(b *testing.B, fn func(b *testing.B)) {
		b.ReportAllocs()
		for b.Loop() {
			fn(b)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streamBatchSize), "ns/item")
	}
	stages := []struct {
		name string
		fn   func(b *testing.B)
	}{
		{"decode-batch", func(b *testing.B) { decodeBatch(b) }},
		{"decode-object", func(b *testing.B) {
			for _, it := range items {
				if _, err := requestFromProto(it.GetRequest()); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"engine", func(b *testing.B) {
			for range items {
				s.runEngine(ctx, policies, evalReq)
			}
		}},
		{"response", func(b *testing.B) {
			for range items {
				if _, err := responseToProto(evalReq, groupResults(policies, evalRes.Results), evalRes); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"metrics", func(b *testing.B) {
			for range items {
				s.metrics.countResults(evalReq, groups, false, time.Microsecond)
			}
		}},
		{"encode-answer", func(b *testing.B) {
			out, err := serverCodec.Marshal(shared())
			if err != nil {
				b.Fatal(err)
			}
			out.Free()
		}},
		{"client-decode-answer", func(b *testing.B) {
			var a verdictv1.EvaluateStreamResponse
			if err := clientCodec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(answerWire)}, &a); err != nil {
				b.Fatal(err)
			}
		}},
		{"server-items", func(b *testing.B) {
			for i, it := range items {
				s.evaluateItem(ctx, i, it)
			}
		}},
	}
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) { perItem(b, st.fn) })
	}
}
