package cases_test

import (
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine/cases"
)

func TestLoad(t *testing.T) {
	all, err := cases.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("Load() = no cases")
	}
	for _, c := range all {
		if c.Note == "" || !strings.HasSuffix(c.File, ".yaml") || c.Area() == "." {
			t.Errorf("Load(): case %q of file %q (area %q), want a note and a file in an area", c.Note, c.File, c.Area())
		}
	}
}

const enforce = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  failurePolicy: %s
  rules: []
`

func TestDiff(t *testing.T) {
	fail := cases.Result{Policy: "p", Rule: "r", Result: "fail", Message: "bad", Enforce: true}
	want := cases.Case{Want: []cases.Result{fail}}
	noMessage := cases.Case{Want: []cases.Result{{Policy: "p", Rule: "r", Result: "fail", Enforce: true}}}
	tests := []struct {
		name     string
		c        cases.Case
		got      cases.Outcome
		wantDiff string // a part of the diff; "" for none
	}{
		{"same results", want, cases.Outcome{Results: []cases.Result{fail}}, ""},
		{"a message the case does not give is not compared", noMessage, cases.Outcome{Results: []cases.Result{fail}}, ""},
		{"another result", want, cases.Outcome{Results: []cases.Result{{Policy: "p", Rule: "r", Result: "pass", Enforce: true}}}, "results mismatch"},
		{"results not seen", want, cases.Outcome{NoResults: true}, ""},
		{"an error instead of results", want, cases.Outcome{Error: &cases.Error{Code: "invalid_policy"}}, "error mismatch"},
		{"denied with the message", want, cases.Outcome{NoResults: true, Admission: &cases.Admission{Message: "p:\n  r: bad"}}, ""},
		{"denied without the message", want, cases.Outcome{NoResults: true, Admission: &cases.Admission{Message: "p: other"}}, "does not give the message"},
		{"allowed", want, cases.Outcome{NoResults: true, Admission: &cases.Admission{Allowed: true}}, "allowed = true, want false"},
		{"no patch wanted", cases.Case{WantNoPatch: true}, cases.Outcome{Patch: []byte(`[]`)}, "want none"},
		{"patch", cases.Case{WantPatch: []any{map[string]any{"op": "remove", "path": "/a"}}}, cases.Outcome{Patch: []byte(`[{"op":"remove","path":"/a"}]`)}, ""},
	}
	for _, tt := range tests {
		got := tt.c.Diff(tt.got)
		if tt.wantDiff == "" && got != "" || !strings.Contains(got, tt.wantDiff) {
			t.Errorf("Diff(%s) = %q, want %q", tt.name, got, tt.wantDiff)
		}
	}
}

func TestWantDenied(t *testing.T) {
	tests := []struct {
		name          string
		failurePolicy string
		want          []cases.Result
		denied        bool
	}{
		{"failed Enforce rule", "Fail", []cases.Result{{Policy: "p", Result: "fail", Enforce: true}}, true},
		{"failed Audit rule", "Fail", []cases.Result{{Policy: "p", Result: "fail"}}, false},
		{"error, failurePolicy Fail", "Fail", []cases.Result{{Policy: "p", Result: "error", Enforce: true}}, true},
		{"error, failurePolicy Ignore", "Ignore", []cases.Result{{Policy: "p", Result: "error", Enforce: true}}, false},
		{"warn", "Fail", []cases.Result{{Policy: "p", Result: "warn", Enforce: true}}, false},
	}
	for _, tt := range tests {
		c := cases.Case{Policy: strings.Replace(enforce, "%s", tt.failurePolicy, 1), Want: tt.want}
		if got := c.WantDenied(); got != tt.denied {
			t.Errorf("WantDenied(%s) = %v, want %v", tt.name, got, tt.denied)
		}
	}
}
