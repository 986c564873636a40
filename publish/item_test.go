package publish_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

var (
	t0  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pod = publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", UID: "u1", ResourceVersion: "7"}
	ref = &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", Uid: "u1"}
)

func TestItem(t *testing.T) {
	results := []*verdictv1.RuleResult{{Policy: "p", Rule: "r", Result: verdictv1.Result_RESULT_FAIL}}
	policies := []*verdictv1.PolicyVersion{{Kind: "ClusterPolicy", Name: "p", ContentHash: "h"}}
	denied := &verdictv1.EvaluateResponse{Allowed: false, Results: results, Policies: policies}
	tests := []struct {
		name string
		give publish.Evaluation
		want *verdictv1.ResourceEvaluation
	}{
		{
			name: "admission",
			give: publish.Evaluation{Resource: pod, Operation: "CREATE", DryRun: true, Time: t0, Complete: true, Response: denied},
			want: &verdictv1.ResourceEvaluation{
				Resource: ref, ResourceVersion: "7", Source: verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
				Operation: verdictv1.Operation_OPERATION_CREATE, Time: timestamppb.New(t0), Policies: policies, Results: results,
				Denied: true, DryRun: true, Complete: true,
			},
		},
		{
			name: "background: never denied nor a dry run",
			give: publish.Evaluation{Resource: pod, Background: true, DryRun: true, Time: t0, Response: denied},
			want: &verdictv1.ResourceEvaluation{
				Resource: ref, ResourceVersion: "7", Source: verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
				Time: timestamppb.New(t0), Policies: policies, Results: results,
			},
		},
		{
			name: "deleted by a watch: a DELETE without results",
			give: publish.Evaluation{Resource: pod, Background: true, Deleted: true, Time: t0, Response: denied},
			want: &verdictv1.ResourceEvaluation{
				Resource: ref, Source: verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
				Operation: verdictv1.Operation_OPERATION_DELETE, Time: timestamppb.New(t0),
			},
		},
	}
	for _, tt := range tests {
		got := publish.Item(tt.give).GetEvaluation()
		if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
			t.Errorf("Item(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestItemNone(t *testing.T) {
	resp := &verdictv1.EvaluateResponse{Allowed: true}
	tests := []struct {
		name string
		give publish.Evaluation
	}{
		{"inline policies", publish.Evaluation{Resource: pod, Inline: true, Time: t0, Response: resp}},
		{"no answer", publish.Evaluation{Resource: pod, Background: true, Time: t0}},
		{"no kind", publish.Evaluation{Resource: publish.Resource{APIVersion: "v1", Name: "web"}, Time: t0, Response: resp}},
		{"no name", publish.Evaluation{Resource: publish.Resource{APIVersion: "v1", Kind: "Pod"}, Time: t0, Response: resp}},
		{"no apiVersion", publish.Evaluation{Resource: publish.Resource{Kind: "Pod", Name: "web"}, Time: t0, Response: resp}},
	}
	for _, tt := range tests {
		if got := publish.Item(tt.give); got != nil {
			t.Errorf("Item(%s) = %v, want nil", tt.name, got)
		}
	}
}

func TestScanDoneItem(t *testing.T) {
	d := publish.ScanDone{Started: t0, ShardIndex: 1, ShardCount: 4, Kinds: []string{"Pod"}, Seen: []publish.Resource{pod}}
	want := &verdictv1.BackgroundScanDone{Started: timestamppb.New(t0), ShardIndex: 1, ShardCount: 4, Kinds: []string{"Pod"}, Seen: []*verdictv1.ObjectReference{ref}}
	if diff := cmp.Diff(want, d.Item().GetScanDone(), protocmp.Transform()); diff != "" {
		t.Errorf("ScanDone.Item() mismatch (-want +got):\n%s", diff)
	}
}
