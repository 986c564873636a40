package scanner

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// recorder is an Applier that keeps the batches it is given.
type recorder struct {
	mu    sync.Mutex
	items []*verdictv1.PublishItem
}

func (r *recorder) Apply(_ context.Context, items []*verdictv1.PublishItem) (publish.ApplyResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, items...)
	return publish.ApplyResult{}, nil
}

// answer is a server's answer on a Pod, decoded from the wire as the
// client gets it (its strings its own).
func answer(t *testing.T) *verdictv1.EvaluateResponse {
	t.Helper()
	r := &verdictv1.EvaluateResponse{Allowed: true}
	for _, p := range []string{"disallow-privileged-containers", "require-run-as-nonroot"} {
		r.Policies = append(r.Policies, &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: p, ContentHash: strings.Repeat("a", 64), Background: true})
		r.Results = append(r.Results, &verdictv1.RuleResult{Policy: p, Rule: "check", Result: verdictv1.Result_RESULT_PASS,
			Message: "validation rule 'check' passed.", Category: "Pod Security Standards (Baseline)", Severity: "medium", Scored: true})
	}
	b, err := proto.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := &verdictv1.EvaluateResponse{}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportSinkShares: the items of a ReportSink are those of
// publish.Item, with the policy list of the previous item and one copy of
// each repeated string.
func TestReportSinkShares(t *testing.T) {
	rec := &recorder{}
	q, err := publish.NewLocal(rec, publish.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	var results, want []*verdictv1.PublishItem
	var rs []Result
	for i := range 3 {
		r := Result{Resource: ResourceRef{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web-" + strconv.Itoa(i), UID: "uid-" + strconv.Itoa(i)},
			Response: answer(t), Time: time.Unix(1700000000, 0), AllPolicies: true}
		rs = append(rs, r)
		want = append(want, publish.Item(publish.Evaluation{Resource: publish.Resource(r.Resource), Background: true, Time: r.Time, Complete: true, Response: answer(t)}))
	}
	sink := ReportSink(q)
	if err := sink.Write(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	results = rec.items
	if diff := cmp.Diff(want, results, protocmp.Transform()); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	first, last := results[0].GetEvaluation(), results[2].GetEvaluation()
	if &first.Policies[0] != &last.Policies[0] {
		t.Errorf("the policies of items 0 and 2 are two lists, want one shared")
	}
	a, b := first.Results[1], last.Results[1]
	for _, f := range []struct{ name, a, b string }{
		{"policy", a.Policy, b.Policy}, {"rule", a.Rule, b.Rule}, {"message", a.Message, b.Message},
		{"category", a.Category, b.Category}, {"severity", a.Severity, b.Severity},
	} {
		if unsafe.StringData(f.a) != unsafe.StringData(f.b) {
			t.Errorf("the %s of the results of items 0 and 2: two copies, want one", f.name)
		}
	}
}
