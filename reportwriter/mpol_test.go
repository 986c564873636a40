package reportwriter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// TestMutatingPolicyReports writes the results of a MutatingPolicy and of
// a NamespacedMutatingPolicy as Kyverno 1.19 does
// (reportutils.ToPolicyReportResult): source KyvernoMutatingPolicy, the
// rule of the mutations empty, the policy "name" or "namespace/name", the
// label mpol.kyverno.io/<name>, in the reports mpol-<name> and
// nmpol-<name>.
func TestMutatingPolicyReports(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	mp := &verdictv1.PolicyVersion{Kind: "MutatingPolicy", Name: "add-team", ContentHash: "0123456789abcdef", Background: true}
	nmp := &verdictv1.PolicyVersion{Kind: "NamespacedMutatingPolicy", Namespace: "shop", Name: "add-owner", ContentHash: "fedcba9876543210"}
	ev := &verdictv1.ResourceEvaluation{
		Resource:  podA.ref(),
		Source:    verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:      at(0),
		Policies:  []*verdictv1.PolicyVersion{mp, nmp},
		Results: []*verdictv1.RuleResult{
			{Policy: "add-team", Type: verdictv1.RuleType_RULE_TYPE_MUTATION, Result: pass, Message: "success", Scored: true},
			{Policy: "add-owner", PolicyNamespace: "shop", Type: verdictv1.RuleType_RULE_TYPE_MUTATION, Result: verdictv1.Result_RESULT_ERROR, Message: "failed to evaluate policy", Scored: true},
		},
	}
	acks := sendBatches(t, e.client, items(&verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: ev}}))
	if rej := acks[0].GetRejected(); len(rej) > 0 {
		t.Fatalf("Publish rejected %v", rej)
	}
	tests := []struct {
		report     string
		wantLabel  string
		wantResult reportwriter.ReportResult
	}{
		{"mpol-add-team", "mpol.kyverno.io/add-team", reportwriter.ReportResult{
			Source: "KyvernoMutatingPolicy", Policy: "add-team", Result: "pass", Scored: true, Message: "success",
			Properties: map[string]string{"process": "background scan"},
		}},
		{"nmpol-add-owner", "mpol.kyverno.io/add-owner", reportwriter.ReportResult{
			Source: "KyvernoMutatingPolicy", Policy: "shop/add-owner", Result: "error", Scored: true, Message: "failed to evaluate policy",
			Properties: map[string]string{"process": "admission review"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.report, func(t *testing.T) {
			got := getReport(t, e.client, "shop", tt.report)
			if got == nil {
				t.Fatalf("GetReport(shop/%s) = not found, want a report", tt.report)
			}
			if _, ok := got.Metadata.Labels[tt.wantLabel]; !ok {
				t.Errorf("GetReport(shop/%s) labels = %v, want %s", tt.report, got.Metadata.Labels, tt.wantLabel)
			}
			if len(got.Results) != 1 {
				t.Fatalf("GetReport(shop/%s) = %d results, want 1", tt.report, len(got.Results))
			}
			r := got.Results[0]
			r.Timestamp, r.Resources = reportwriter.Timestamp{}, nil
			if diff := cmp.Diff(tt.wantResult, r); diff != "" {
				t.Errorf("GetReport(shop/%s) result (-want +got):\n%s", tt.report, diff)
			}
		})
	}
}
