package reportwriter_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

// labelled returns the value of the counter name{label="value"} of reg
// (0 when absent).
func labelled(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// sortRows sorts report rows before a comparison.
var sortRows = cmpopts.SortSlices(func(a, b row) bool {
	return a.Report+a.Policy+a.Rule+a.Resource < b.Report+b.Policy+b.Rule+b.Resource
})

// far is a time in the year 2999.
var far = timestamppb.New(time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC))

func timed(it *verdictv1.PublishItem, ts *timestamppb.Timestamp) *verdictv1.PublishItem {
	switch {
	case it.GetEvaluation() != nil:
		it.GetEvaluation().Time = ts
	case it.GetScanDone() != nil:
		it.GetScanDone().Started = ts
	case it.GetPolicySet() != nil:
		it.GetPolicySet().Time = ts
	}
	return it
}

var (
	failL = []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")}
	failT = []*verdictv1.RuleResult{rr(polTeam, "check-team", fail, "no team")}
	passL = []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}
)

// TestFutureTimeRefused publishes items dated in the year 2999 after two
// evaluations: each is rejected, naming its field and the skew, and
// counted; the reports stay, and a later evaluation is applied (before the
// check, a PolicySet of 2999 erased every report and made every later
// evaluation a duplicate).
func TestFutureTimeRefused(t *testing.T) {
	tests := []struct {
		name      string
		give      *verdictv1.PublishItem
		wantField string
	}{
		{"policy set", timed(policySet(0), far), "policy_set.time"},
		{"evaluation", timed(evaluation(podA, 0, passL, []pol{polLatest}), far), "evaluation.time"},
		{"deletion", timed(deletion(podA, 0), far), "evaluation.time"},
		{"scan done", timed(scanDone(0), far), "scan_done.started"},
		// One second over the writer's clock (t0+1h) plus the skew (5m).
		{"policy set just over the skew", timed(policySet(0), at(3600+300+1)), "policy_set.time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg})
			sendBatches(t, e.client, items(evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam})))
			want := rows(t, e.client)
			acks := sendBatches(t, e.client, items(tt.give), items(evaluation(podB, 10, passL, []pol{polLatest})))
			var got []string
			for _, r := range acks[0].GetRejected() {
				got = append(got, r.GetViolation().GetField()+" "+r.GetViolation().GetReason())
			}
			if diff := cmp.Diff([]string{"items[0]." + tt.wantField + " invalid_argument"}, got); diff != "" {
				t.Errorf("Publish(%s) rejected mismatch (-want +got):\n%s", tt.name, diff)
			}
			if n := labelled(t, reg, "verdict_reports_future_time_rejected_total", "field", tt.wantField); n != 1 {
				t.Errorf("verdict_reports_future_time_rejected_total{field=%q} = %v, want 1", tt.wantField, n)
			}
			if d := acks[1].GetDuplicates(); d != 0 {
				t.Errorf("Publish(a later evaluation after %s).Duplicates = %d, want 0", tt.name, d)
			}
			want = append(want, row{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/debug", "pass", 10})
			if diff := cmp.Diff(want, rows(t, e.client), sortRows); diff != "" {
				t.Errorf("reports after %s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestFutureTimeAtTheSkew publishes items dated at the writer's clock
// plus the max clock skew: accepted.
func TestFutureTimeAtTheSkew(t *testing.T) {
	limit := at(3600 + 300) // t0+1h is the writer's clock, 5m the skew
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	acks := sendBatches(t, e.client, items(
		timed(evaluation(podA, 0, failL, []pol{polLatest}), limit),
		timed(policySet(0, polRules{polLatest, []string{"validate-image-tag"}}), limit),
		timed(scanDone(0, podA), limit),
	))
	if r := acks[0].GetRejected(); len(r) != 0 {
		t.Errorf("Publish(items at the max clock skew) rejected %v, want none", r)
	}
}

// TestFutureTimeRepairedOnOpen opens a store written before the check,
// holding a policy set, entries and a tombstone dated in 2999: the writer
// removes them at start (logged and counted), and evaluations after that
// are applied, not duplicates.
func TestFutureTimeRepairedOnOpen(t *testing.T) {
	path := tempDB(t)
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	future := far.AsTime()
	pod := reportwriter.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", UID: "uid-web"}
	old := reportwriter.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "api", UID: "uid-api"}
	pv := func(tm time.Time) reportwriter.PolicyVersion {
		return reportwriter.PolicyVersion{Kind: "ClusterPolicy", Name: polLatest.name, Hash: polLatest.hash, Background: true, Time: tm}
	}
	entry := reportwriter.Entry{Policy: polLatest.name, Rule: "validate-image-tag", Result: "fail", Message: "bad tag", Scored: true}
	err = st.Write(context.Background(), &reportwriter.Changes{
		PutIntermediaries: []*reportwriter.Intermediary{
			{Source: reportwriter.SourceAdmission, Owner: pod, Policies: []reportwriter.PolicyVersion{pv(future)}, Results: []reportwriter.Entry{entry}},
			{Source: reportwriter.SourceAdmission, Owner: old, Policies: []reportwriter.PolicyVersion{pv(t0)}, Results: []reportwriter.Entry{entry}},
		},
		PutTombstones: map[string]time.Time{"uid-debug": future},
		Policies: &reportwriter.PolicySets{Sets: []*reportwriter.PolicySet{{
			Time: future, Received: future, Policies: []reportwriter.PolicyState{{Version: pv(time.Time{}), Rules: []string{"validate-image-tag"}}},
		}}},
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e := startWriter(t, path, "127.0.0.1:0", reportwriter.Options{Registry: reg})
	for _, what := range []string{"policy_set", "entry", "tombstone"} {
		if n := labelled(t, reg, "verdict_reports_future_time_repaired_total", "what", what); n != 1 {
			t.Errorf("verdict_reports_future_time_repaired_total{what=%q} = %v, want 1", what, n)
		}
	}
	acks := sendBatches(t, e.client, items(
		evaluation(podA, 10, passL, []pol{polLatest}),
		evaluation(podB, 11, passL, []pol{polLatest}),
	))
	if d := acks[0].GetDuplicates(); d != 0 {
		t.Errorf("Publish(evaluations after the repair).Duplicates = %d, want 0", d)
	}
	want := []row{
		{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/api", "fail", 0},
		{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/debug", "pass", 11},
		{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", "pass", 10},
	}
	if diff := cmp.Diff(want, rows(t, e.client), sortRows); diff != "" {
		t.Errorf("reports after the repair mismatch (-want +got):\n%s", diff)
	}
}
