package server

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// streamOutcome is one result of a batch, as the tests compare it.
type streamOutcome struct {
	ID      string
	Allowed bool
	Code    codes.Code
	Fields  []string
}

func outcomesOf(resp *verdictv1.EvaluateStreamResponse) []streamOutcome {
	var out []streamOutcome
	for _, r := range resp.GetResults() {
		o := streamOutcome{ID: r.GetId()}
		if e := r.GetError(); e != nil {
			o.Code = codes.Code(e.GetCode())
			for _, v := range e.GetFieldViolations() {
				o.Fields = append(o.Fields, v.GetField())
			}
		} else {
			o.Allowed = r.GetResponse().GetAllowed()
		}
		out = append(out, o)
	}
	return out
}

func TestEvaluateStream(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}, StreamWorkers: 4})
	c := ts.client(t)

	good := pod(t, "good", "default", "nginx", map[string]string{"team": "a"})
	bad := pod(t, "bad", "default", "nginx", nil)
	item := func(id string, obj []byte) *verdictv1.EvaluateStreamItem {
		return &verdictv1.EvaluateStreamItem{Id: id, Request: &verdictv1.EvaluateRequest{Object: obj}}
	}
	var big []*verdictv1.EvaluateStreamItem
	var bigWant []streamOutcome
	for i := range 100 {
		obj, allowed := good, true
		if i%3 == 0 {
			obj, allowed = bad, false
		}
		id := fmt.Sprintf("big-%d", i)
		big = append(big, item(id, obj))
		bigWant = append(bigWant, streamOutcome{ID: id, Allowed: allowed})
	}
	batches := []*verdictv1.EvaluateStreamRequest{
		{Items: []*verdictv1.EvaluateStreamItem{item("a", good), item("b", bad)}},
		{Items: []*verdictv1.EvaluateStreamItem{
			item("c", []byte(`{"kind":`)),
			{Id: "d"},
			item("e", good),
		}},
		{},
		{Items: big},
	}
	want := [][]streamOutcome{
		{{ID: "a", Allowed: true}, {ID: "b", Allowed: false}},
		{
			{ID: "c", Code: codes.InvalidArgument, Fields: []string{"items[0].request.object"}},
			{ID: "d", Code: codes.InvalidArgument, Fields: []string{"items[1].request"}},
			{ID: "e", Allowed: true},
		},
		nil,
		bigWant,
	}

	stream, err := c.EvaluateStream(t.Context())
	if err != nil {
		t.Fatalf("EvaluateStream: %v", err)
	}
	// Send every batch before reading: answers come in batch order.
	go func() {
		for _, b := range batches {
			if err := stream.Send(b); err != nil {
				return
			}
		}
		stream.CloseSend()
	}()
	var got [][]streamOutcome
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		got = append(got, outcomesOf(resp))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvaluateStream outcomes mismatch (-want +got):\n%s", diff)
	}
}

func TestEvaluateStreamBatchLimit(t *testing.T) {
	ts := startServer(t, Options{MaxBatchSize: 2})
	c := ts.client(t)
	item := &verdictv1.EvaluateStreamItem{Id: "x", Request: &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", "nginx", nil)}}
	tests := []struct {
		name        string
		giveItems   int
		wantCode    codes.Code
		wantResults int
		wantFields  []violation
	}{
		{name: "at the limit", giveItems: 2, wantCode: codes.OK, wantResults: 2},
		{name: "over the limit", giveItems: 3, wantCode: codes.ResourceExhausted, wantFields: []violation{{"items", "limit_exceeded"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := c.EvaluateStream(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			b := &verdictv1.EvaluateStreamRequest{}
			for range tt.giveItems {
				b.Items = append(b.Items, item)
			}
			if err := stream.Send(b); err != nil {
				t.Fatal(err)
			}
			resp, err := stream.Recv()
			code, vs := statusOf(err)
			if code != tt.wantCode || len(resp.GetResults()) != tt.wantResults {
				t.Errorf("batch of %d with limit 2: code %v and %d results, want %v and %d", tt.giveItems, code, len(resp.GetResults()), tt.wantCode, tt.wantResults)
			}
			if diff := cmp.Diff(tt.wantFields, vs); diff != "" {
				t.Errorf("batch of %d field violations mismatch (-want +got):\n%s", tt.giveItems, diff)
			}
		})
	}
}
