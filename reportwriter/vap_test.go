package reportwriter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// TestValidatingAdmissionPolicyReports writes the background results of a
// ValidatingAdmissionPolicy as Kyverno 1.19's reports controller does
// (--validatingAdmissionPolicyReports): source ValidatingAdmissionPolicy,
// rule the policy's name, the binding and process "background scan" as
// properties, the label validatingadmissionpolicy.apiserver.io/<name>, in
// the report vap-<name>.
func TestValidatingAdmissionPolicyReports(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	vp := &verdictv1.PolicyVersion{Kind: "ValidatingAdmissionPolicy", Name: "check-replicas", ContentHash: "0123456789abcdef", Background: true}
	ev := &verdictv1.ResourceEvaluation{
		Resource:  podA.ref(),
		Source:    verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
		Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:      at(0),
		Policies:  []*verdictv1.PolicyVersion{vp},
		Results: []*verdictv1.RuleResult{
			{Policy: "check-replicas", Rule: "check-replicas", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: fail,
				Message: "failed expression: object.spec.replicas <= 5", Scored: true, Properties: map[string]string{"binding": "check-replicas-binding"}},
		},
	}
	acks := sendBatches(t, e.client, items(&verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: ev}}))
	if rej := acks[0].GetRejected(); len(rej) > 0 {
		t.Fatalf("Publish rejected %v", rej)
	}
	got := getReport(t, e.client, "shop", "vap-check-replicas")
	if got == nil {
		t.Fatalf("GetReport(shop/vap-check-replicas) = not found, want a report")
	}
	if _, ok := got.Metadata.Labels["validatingadmissionpolicy.apiserver.io/check-replicas"]; !ok {
		t.Errorf("GetReport(shop/vap-check-replicas) labels = %v, want validatingadmissionpolicy.apiserver.io/check-replicas", got.Metadata.Labels)
	}
	if len(got.Results) != 1 {
		t.Fatalf("GetReport(shop/vap-check-replicas) = %d results, want 1", len(got.Results))
	}
	r := got.Results[0]
	r.Timestamp, r.Resources = reportwriter.Timestamp{}, nil
	want := reportwriter.ReportResult{
		Source: "ValidatingAdmissionPolicy", Policy: "check-replicas", Rule: "check-replicas", Result: "fail", Scored: true,
		Message:    "failed expression: object.spec.replicas <= 5",
		Properties: map[string]string{"binding": "check-replicas-binding", "process": "background scan"},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("GetReport(shop/vap-check-replicas) result (-want +got):\n%s", diff)
	}
}
