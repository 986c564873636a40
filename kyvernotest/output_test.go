package kyvernotest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func outputFixture() *Report {
	return &Report{
		Passed: 2, Failed: 2,
		Suites: []SuiteResult{
			{Path: "a/kyverno-test.yaml", Name: "a", Results: []Result{
				{Test: "a/kyverno-test.yaml", Policy: "p", Rule: "r", Resource: "v1/Pod/default/x", Expected: "pass", Actual: "pass", OK: true, Reason: "Ok", ActualRule: "r", Message: "fine"},
				{Test: "a/kyverno-test.yaml", Policy: "p", Rule: "r", Resource: "apps/v1/Deployment/default/y", Expected: "pass", Actual: "fail", OK: false, Reason: "Want pass, got fail", ActualRule: "autogen-r", Message: "bad\nlabel"},
				{Test: "a/kyverno-test.yaml", Policy: "p", Rule: "r", Resource: "v1/Service/default/z", Expected: "skip", OK: true, Reason: "Excluded"},
			}},
			{Path: "b/kyverno-test.yaml", Err: errors.New("load policies: missing.yaml: no such file"), Results: []Result{
				{Test: "b/kyverno-test.yaml", Policy: "q", Rule: "r", Resource: "x", Expected: "pass", Reason: "load policies: missing.yaml: no such file"},
			}},
		},
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, outputFixture(), OutputOptions{}); err != nil {
		t.Fatalf("WriteText() error = %v", err)
	}
	want := `
Test a (a/kyverno-test.yaml)
│────│────────│───────────│──────────────────────────────│────────│─────────────────────│
│ ID │ POLICY │ RULE      │ RESOURCE                     │ RESULT │ REASON              │
│────│────────│───────────│──────────────────────────────│────────│─────────────────────│
│ 1  │ p      │ r         │ v1/Pod/default/x             │ Pass   │ Ok                  │
│ 2  │ p      │ autogen-r │ apps/v1/Deployment/default/y │ Fail   │ Want pass, got fail │
│ 3  │ p      │ r         │ v1/Service/default/z         │ Pass   │ Excluded            │
│────│────────│───────────│──────────────────────────────│────────│─────────────────────│

Test - (b/kyverno-test.yaml)
  Error: load policies: missing.yaml: no such file
│────│────────│──────│──────────│────────│───────────────────────────────────────────│
│ ID │ POLICY │ RULE │ RESOURCE │ RESULT │ REASON                                    │
│────│────────│──────│──────────│────────│───────────────────────────────────────────│
│ 1  │ q      │ r    │ x        │ Fail   │ load policies: missing.yaml: no such file │
│────│────────│──────│──────────│────────│───────────────────────────────────────────│

2 passed, 2 failed
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("WriteText() mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteTextOptions(t *testing.T) {
	tests := []struct {
		name        string
		give        OutputOptions
		wantContain []string
		wantAbsent  []string
	}{
		{name: "fail only", give: OutputOptions{FailOnly: true}, wantContain: []string{"Want pass, got fail", "no such file"}, wantAbsent: []string{"Excluded", "│ Pass"}},
		{name: "detailed", give: OutputOptions{Detailed: true}, wantContain: []string{"MESSAGE", "│ bad     │\n│    │        │           │                              │        │                     │ label   │\n"}},
		{name: "color", give: OutputOptions{Color: true}, wantContain: []string{ansiGreen + "Pass" + ansiReset, ansiRed + "Fail" + ansiReset}},
		{name: "no color by default", give: OutputOptions{}, wantAbsent: []string{"\x1b["}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteText(&buf, outputFixture(), tt.give); err != nil {
				t.Fatalf("WriteText() error = %v", err)
			}
			got := buf.String()
			for _, s := range tt.wantContain {
				if !strings.Contains(got, s) {
					t.Errorf("WriteText(%+v) = %q, want it to contain %q", tt.give, got, s)
				}
			}
			for _, s := range tt.wantAbsent {
				if strings.Contains(got, s) {
					t.Errorf("WriteText(%+v) = %q, want it without %q", tt.give, got, s)
				}
			}
			lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
			if last := lines[len(lines)-1]; last != "2 passed, 2 failed" {
				t.Errorf("WriteText(%+v) last line = %q, want %q", tt.give, last, "2 passed, 2 failed")
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name string
		give OutputOptions
		want map[string]any
	}{
		{
			name: "every result, without messages",
			give: OutputOptions{},
			want: map[string]any{"passed": 2.0, "failed": 2.0, "results": []any{
				map[string]any{"test": "a/kyverno-test.yaml", "policy": "p", "rule": "r", "resource": "v1/Pod/default/x", "expected": "pass", "actual": "pass", "ok": true, "reason": "Ok"},
				map[string]any{"test": "a/kyverno-test.yaml", "policy": "p", "rule": "r", "resource": "apps/v1/Deployment/default/y", "expected": "pass", "actual": "fail", "ok": false, "reason": "Want pass, got fail"},
				map[string]any{"test": "a/kyverno-test.yaml", "policy": "p", "rule": "r", "resource": "v1/Service/default/z", "expected": "skip", "actual": "", "ok": true, "reason": "Excluded"},
				map[string]any{"test": "b/kyverno-test.yaml", "policy": "q", "rule": "r", "resource": "x", "expected": "pass", "actual": "", "ok": false, "reason": "load policies: missing.yaml: no such file"},
			}},
		},
		{
			name: "failed only, detailed",
			give: OutputOptions{FailOnly: true, Detailed: true},
			want: map[string]any{"passed": 2.0, "failed": 2.0, "results": []any{
				map[string]any{"test": "a/kyverno-test.yaml", "policy": "p", "rule": "r", "resource": "apps/v1/Deployment/default/y", "expected": "pass", "actual": "fail", "ok": false, "reason": "Want pass, got fail", "message": "bad\nlabel"},
				map[string]any{"test": "b/kyverno-test.yaml", "policy": "q", "rule": "r", "resource": "x", "expected": "pass", "actual": "", "ok": false, "reason": "load policies: missing.yaml: no such file"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, outputFixture(), tt.give); err != nil {
				t.Fatalf("WriteJSON() error = %v", err)
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("WriteJSON() wrote invalid JSON %q: %v", buf.String(), err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WriteJSON(%+v) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
