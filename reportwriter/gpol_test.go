package reportwriter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// TestGeneratingPolicyReports writes the result of a GeneratingPolicy as
// Kyverno 1.19 does (pkg/utils/report: source KyvernoGeneratingPolicy,
// label gpol.kyverno.io/<name>; the rule is the policy's name), in the
// report gpol-<name>, and reads the kind back from the report's name.
func TestGeneratingPolicyReports(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	gp := &verdictv1.PolicyVersion{Kind: "GeneratingPolicy", Name: "add-netpol", ContentHash: "0123456789abcdef"}
	ev := &verdictv1.ResourceEvaluation{
		Resource:  podA.ref(),
		Source:    verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:      at(0),
		Policies:  []*verdictv1.PolicyVersion{gp},
		Results: []*verdictv1.RuleResult{
			{Policy: "add-netpol", Rule: "add-netpol", Type: verdictv1.RuleType_RULE_TYPE_GENERATION, Result: pass, Message: "policy evaluated successfully", Scored: true},
		},
	}
	acks := sendBatches(t, e.client, items(&verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: ev}}))
	if rej := acks[0].GetRejected(); len(rej) > 0 {
		t.Fatalf("Publish rejected %v", rej)
	}
	got := getReport(t, e.client, "shop", "gpol-add-netpol")
	if got == nil {
		t.Fatal("GetReport(shop/gpol-add-netpol) = not found, want a report")
	}
	if _, ok := got.Metadata.Labels["gpol.kyverno.io/add-netpol"]; !ok {
		t.Errorf("GetReport(shop/gpol-add-netpol) labels = %v, want gpol.kyverno.io/add-netpol", got.Metadata.Labels)
	}
	if len(got.Results) != 1 {
		t.Fatalf("GetReport(shop/gpol-add-netpol) = %d results, want 1", len(got.Results))
	}
	r := got.Results[0]
	r.Timestamp, r.Resources = reportwriter.Timestamp{}, nil
	want := reportwriter.ReportResult{Source: "KyvernoGeneratingPolicy", Policy: "add-netpol", Rule: "add-netpol", Result: "pass", Scored: true,
		Message: "policy evaluated successfully", Properties: map[string]string{"process": "admission review"}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("GetReport(shop/gpol-add-netpol) result (-want +got):\n%s", diff)
	}
	for name, wantKind := range map[string]string{"gpol-a": "GeneratingPolicy", "ngpol-a": "NamespacedGeneratingPolicy"} {
		if kind, label, ok := reportwriter.PolicyOfReport(name); kind != wantKind || label != "gpol.kyverno.io/" || !ok {
			t.Errorf("PolicyOfReport(%q) = %q, %q, %v; want %q, gpol.kyverno.io/, true", name, kind, label, ok, wantKind)
		}
	}
}
