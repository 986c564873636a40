package policyreport

import "testing"

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

func TestOpenReportsKind(t *testing.T) {
	tests := []struct {
		kind string
		want string
	}{
		{KindPolicyReport, KindReport},
		{KindClusterPolicyReport, KindClusterReport},
		{"List", "List"},
	}
	for _, tt := range tests {
		if got := OpenReportsKind(tt.kind); got != tt.want {
			t.Errorf("OpenReportsKind(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}
