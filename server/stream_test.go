package server

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

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

// imageTagPolicy is a second policy for Pods (audit), for
// TestSharedPolicyVersions.
var imageTagPolicy = bt(`apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-latest
spec:
  rules:
  - name: tag
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      message: no latest
      pattern:
        spec:
          containers:
          - image: "!*:latest"
`)

// TestSharedPolicyVersions sends the same batch with and without
// shared_policy_versions: the shared answer lists each version once and
// the items refer to them; given back their versions, the items equal the
// plain answer's.
func TestSharedPolicyVersions(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"team.yaml": teamLabelPolicy, "tag.yaml": imageTagPolicy})
	ts := startServer(t, Options{Sources: []PolicySource{src}})
	c := ts.client(t)
	var items []*verdictv1.EvaluateStreamItem
	for i := range 20 {
		labels := map[string]string{"team": "a"}
		if i%2 == 0 {
			labels = nil
		}
		items = append(items, &verdictv1.EvaluateStreamItem{Id: fmt.Sprint(i), Request: &verdictv1.EvaluateRequest{
			Object: pod(t, fmt.Sprint("p", i), "default", "nginx:latest", labels),
		}})
	}
	items = append(items, &verdictv1.EvaluateStreamItem{Id: "bad", Request: &verdictv1.EvaluateRequest{Object: []byte("{")}})
	answer := func(shared bool) *verdictv1.EvaluateStreamResponse {
		stream, err := c.EvaluateStream(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&verdictv1.EvaluateStreamRequest{Items: items, SharedPolicyVersions: shared}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		stream.CloseSend()
		return resp
	}
	plain, shared := answer(false), answer(true)
	if n := len(plain.GetPolicies()); n != 0 {
		t.Errorf("answer without shared_policy_versions lists %d versions, want 0", n)
	}
	if n := len(shared.GetPolicies()); n != 2 {
		t.Errorf("answer with shared_policy_versions lists %d versions, want 2 (one per policy): %v", n, shared.GetPolicies())
	}
	if len(shared.GetResults()) != len(plain.GetResults()) {
		t.Fatalf("shared answer has %d results, want %d", len(shared.GetResults()), len(plain.GetResults()))
	}
	for i, r := range shared.GetResults() {
		want := plain.GetResults()[i]
		if r.GetError() != nil || want.GetError() != nil {
			if !proto.Equal(r, want) {
				t.Errorf("item %s: shared %v, want %v", r.GetId(), r, want)
			}
			continue
		}
		resp := r.GetResponse()
		if len(resp.GetPolicies()) != 0 || len(resp.GetPolicyIndexes()) != len(want.GetResponse().GetPolicies()) {
			t.Errorf("item %s: %d policies and %d indexes, want 0 and %d", r.GetId(), len(resp.GetPolicies()), len(resp.GetPolicyIndexes()), len(want.GetResponse().GetPolicies()))
			continue
		}
		restored := proto.CloneOf(resp)
		for _, k := range restored.PolicyIndexes {
			restored.Policies = append(restored.Policies, shared.GetPolicies()[k])
		}
		restored.PolicyIndexes = nil
		if diff := cmp.Diff(want.GetResponse(), restored, protocmp.Transform()); diff != "" {
			t.Errorf("item %s with its versions given back (-plain +shared):\n%s", r.GetId(), diff)
		}
	}
}

// TestWithPolicyIndexes checks that the copy of a response made for a
// shared answer keeps every field but policies.
func TestWithPolicyIndexes(t *testing.T) {
	r := &verdictv1.EvaluateResponse{
		Allowed:          true,
		Message:          "m",
		Results:          []*verdictv1.RuleResult{{Policy: "p"}},
		JsonPatch:        []byte("[]"),
		Warnings:         []string{"w"},
		Generates:        []*verdictv1.GenerateIntent{{Policy: "g"}},
		Policies:         []*verdictv1.PolicyVersion{{Name: "p"}},
		GenerateFailures: []*verdictv1.GenerateFailure{{Policy: "f"}},
		TargetPatches:    []*verdictv1.TargetPatch{{Policy: "t"}},
	}
	// Every field but policy_indexes is set, so that a field added to
	// EvaluateResponse and not to this test fails here.
	fields := r.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Name() != "policy_indexes" && !r.ProtoReflect().Has(fd) {
			t.Fatalf("the test response does not set %s", fd.Name())
		}
	}
	got := withPolicyIndexes(r, []uint32{3})
	want := proto.CloneOf(r)
	want.Policies, want.PolicyIndexes = nil, []uint32{3}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("withPolicyIndexes() (-want +got):\n%s", diff)
	}
}
