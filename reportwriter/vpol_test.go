package reportwriter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// TestValidatingPolicyReports writes the results of a ValidatingPolicy and
// of a NamespacedValidatingPolicy as Kyverno 1.19 does: source
// KyvernoValidatingPolicy, the rule of the validations empty, the policy
// "name" or "namespace/name", the label vpol.kyverno.io/<name>, in the
// reports vpol-<name> and nvpol-<name>; a changed version keeps them.
func TestValidatingPolicyReports(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	vp := &verdictv1.PolicyVersion{Kind: "ValidatingPolicy", Name: "require-team", ContentHash: "0123456789abcdef", Background: true}
	nvp := &verdictv1.PolicyVersion{Kind: "NamespacedValidatingPolicy", Namespace: "shop", Name: "require-owner", ContentHash: "fedcba9876543210"}
	ev := &verdictv1.ResourceEvaluation{
		Resource:  podA.ref(),
		Source:    verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:      at(0),
		Policies:  []*verdictv1.PolicyVersion{vp, nvp},
		Results: []*verdictv1.RuleResult{
			{Policy: "require-team", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: fail, Message: "the label team is required", Scored: true},
			{Policy: "require-owner", PolicyNamespace: "shop", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: pass, Scored: true},
		},
	}
	acks := sendBatches(t, e.client, items(&verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: ev}}))
	if rej := acks[0].GetRejected(); len(rej) > 0 {
		t.Fatalf("Publish rejected %v", rej)
	}
	// A new version of the ValidatingPolicy, which lists no rules: its
	// entries stay until it is evaluated again.
	changed := &verdictv1.PolicySet{Time: at(3), Policies: []*verdictv1.PolicyState{
		{Version: &verdictv1.PolicyVersion{Kind: vp.Kind, Name: vp.Name, ContentHash: "changed", Background: true}},
		{Version: nvp},
	}}
	sendBatches(t, e.client, items(&verdictv1.PublishItem{Item: &verdictv1.PublishItem_PolicySet{PolicySet: changed}}))
	tests := []struct {
		report     string
		wantLabel  string
		wantResult reportwriter.ReportResult
	}{
		{"vpol-require-team", "vpol.kyverno.io/require-team", reportwriter.ReportResult{
			Source: "KyvernoValidatingPolicy", Policy: "require-team", Result: "fail", Scored: true, Message: "the label team is required",
			Properties: map[string]string{"process": "background scan"},
		}},
		{"nvpol-require-owner", "vpol.kyverno.io/require-owner", reportwriter.ReportResult{
			Source: "KyvernoValidatingPolicy", Policy: "shop/require-owner", Result: "pass", Scored: true,
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

// TestPolicyOfReport reads the policy kind back from a report name, as
// the cluster store does when it reloads reports.
func TestPolicyOfReport(t *testing.T) {
	tests := []struct {
		name, wantKind, wantLabel string
		wantOK                    bool
	}{
		{"cpol-a", "ClusterPolicy", "cpol.kyverno.io/", true},
		{"pol-a", "Policy", "pol.kyverno.io/", true},
		{"vpol-a", "ValidatingPolicy", "vpol.kyverno.io/", true},
		{"nvpol-a", "NamespacedValidatingPolicy", "vpol.kyverno.io/", true},
		{"vap-a", "ValidatingAdmissionPolicy", "validatingadmissionpolicy.apiserver.io/", true},
		{"mpol-a", "MutatingPolicy", "mpol.kyverno.io/", true},
		{"nmpol-a", "NamespacedMutatingPolicy", "mpol.kyverno.io/", true},
		{"other", "", "", false},
	}
	for _, tt := range tests {
		kind, label, ok := reportwriter.PolicyOfReport(tt.name)
		if kind != tt.wantKind || label != tt.wantLabel || ok != tt.wantOK {
			t.Errorf("PolicyOfReport(%q) = %q, %q, %v; want %q, %q, %v", tt.name, kind, label, ok, tt.wantKind, tt.wantLabel, tt.wantOK)
		}
	}
}
