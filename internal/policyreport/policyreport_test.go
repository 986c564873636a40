package policyreport

import (
	"encoding/json"
	"testing"
)

func TestSummary(t *testing.T) {
	var s Summary
	for _, r := range []string{"pass", "pass", "fail", "warn", "error", "skip", "skip", "skip", "", "unknown"} {
		s.Add(r)
	}
	want := Summary{Pass: 2, Fail: 1, Warn: 1, Error: 1, Skip: 3}
	if s != want {
		t.Errorf("Summary after Add = %+v, want %+v", s, want)
	}
	if got, want := s.String(), "pass: 2, fail: 1, warn: 1, error: 1, skip: 3"; got != want {
		t.Errorf("Summary.String() = %q, want %q", got, want)
	}
}

// TestOpen checks the openreports.io form of a report against the JSON
// Kyverno 1.19's CLI prints for the same report (json.Marshal of an
// openreportsv1alpha1.ClusterReport, as its apply --policy-report
// --output-format json: TypeMeta's kind first, no creationTimestamp,
// an empty source, the summary before the results, scored left out when
// false, corev1.ObjectReference's field order).
func TestOpen(t *testing.T) {
	rep := PolicyReport{
		APIVersion: OpenReportsAPIVersion, Kind: KindClusterReport, Metadata: Metadata{Name: "merged"},
		Results: []Result{
			{Source: "kyverno", Policy: "require-team-label", Rule: "check-team", Category: "Best Practices", Severity: "medium",
				Timestamp: Timestamp{Seconds: 1700000000}, Result: "fail", Scored: true, Message: "label team is required",
				Resources:  []ObjectReference{{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", UID: "u1"}},
				Properties: map[string]string{"process": "background scan"}},
			{Source: "kyverno", Policy: "p", Result: "warn", Timestamp: Timestamp{Seconds: 1700000000}},
		},
		Summary: Summary{Fail: 1, Warn: 1},
	}
	want := `{"kind":"ClusterReport","apiVersion":"openreports.io/v1alpha1","metadata":{"name":"merged"},"source":"","summary":{"pass":0,"fail":1,"warn":1,"error":0,"skip":0},"results":[` +
		`{"source":"kyverno","policy":"require-team-label","rule":"check-team","category":"Best Practices","severity":"medium","timestamp":{"seconds":1700000000,"nanos":0},"result":"fail","scored":true,"resources":[{"kind":"Pod","namespace":"shop","name":"web","uid":"u1","apiVersion":"v1"}],"message":"label team is required","properties":{"process":"background scan"}},` +
		`{"source":"kyverno","policy":"p","timestamp":{"seconds":1700000000,"nanos":0},"result":"warn"}]}`
	b, err := json.Marshal(rep.Open())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != want {
		t.Errorf("json.Marshal(Open()) =\n%s\nwant\n%s", got, want)
	}
}

// TestResultOmitsAsKyverno checks that a result leaves out what Kyverno's
// PolicyReportResult (wgpolicyk8s.io/v1alpha2) and openreports.io's
// ReportResult leave out: both tag result and scored omitempty, so a
// report written by the writer and one printed by the CLI carry the same
// fields.
func TestResultOmitsAsKyverno(t *testing.T) {
	tests := []struct {
		give Result
		want string
	}{
		{give: Result{Source: "kyverno", Policy: "p", Result: "pass", Scored: false},
			want: `{"source":"kyverno","policy":"p","timestamp":{"seconds":0,"nanos":0},"result":"pass"}`},
		{give: Result{Source: "kyverno", Policy: "p", Result: "fail", Scored: true},
			want: `{"source":"kyverno","policy":"p","timestamp":{"seconds":0,"nanos":0},"result":"fail","scored":true}`},
		{give: Result{Policy: "p"},
			want: `{"source":"","policy":"p","timestamp":{"seconds":0,"nanos":0}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.give)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != tt.want {
			t.Errorf("json.Marshal(%+v) = %s, want %s", tt.give, got, tt.want)
		}
	}
}
