package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const corpus = "testdata/corpus"

var goodKeys = []string{
	"cel/check-replicas/.kyverno-test/kyverno-test.yaml|check-replicas||apps/v1/Deployment/default/small|pass",
	"good/require-name/.kyverno-test/kyverno-test.yaml|require-app-label|check-app|v1/Pod/default/labeled|pass",
	"good/require-name/.kyverno-test/kyverno-test.yaml|require-app-label|check-app|v1/Pod/default/unlabeled|fail",
	"mpol/add-annotation/.kyverno-test/kyverno-test.yaml|add-annotation||v1/Pod/default/plain|pass",
	"mutate/add-label/.kyverno-test/kyverno-test.yaml|add-label|add-team|v1/Pod/default/plain|pass",
}

// gpolKey is a result the engine disagrees with (the policy passes).
const gpolKey = "gpol/add-netpol/.kyverno-test/kyverno-test.yaml|add-netpol||v1/Namespace/web|fail"

func runConformance(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"-corpus", corpus}, args...), &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestUpdateWritesSortedPassingKeys(t *testing.T) {
	baseline := filepath.Join(t.TempDir(), "conformance", "baseline.txt")
	code, out := runConformance(t, "-baseline", baseline, "-update")
	if code != 0 {
		t.Fatalf("run(-update) = %d, want 0\n%s", code, out)
	}
	data, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatalf("read baseline: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	if diff := cmp.Diff(goodKeys, got); diff != "" {
		t.Errorf("baseline mismatch (-want +got):\n%s", diff)
	}
	for _, s := range []string{"validate only", "mutate/generate", "ValidatingPolicy", "MutatingPolicy", "GeneratingPolicy", "overall"} {
		if !strings.Contains(out, s) {
			t.Errorf("run(-update) output lacks class %q:\n%s", s, out)
		}
	}
	if got, want := lastLine(out), "5 passed, 0 failed"; got != want {
		t.Errorf("run(-update) last line = %q, want %q", got, want)
	}
}

func TestBaselineComparison(t *testing.T) {
	tests := []struct {
		name         string
		giveBaseline []string
		wantCode     int
		wantLastLine string
		wantOut      string
	}{
		{name: "same results", giveBaseline: goodKeys, wantCode: 0, wantLastLine: "5 passed, 0 failed"},
		{name: "a baseline key that fails now is a regression", giveBaseline: append([]string{gpolKey}, goodKeys...), wantCode: 1, wantLastLine: "5 passed, 1 failed", wantOut: "1 regressions"},
		{name: "a new pass is an improvement", giveBaseline: goodKeys[:1], wantCode: 0, wantLastLine: "5 passed, 0 failed", wantOut: "improved, run with -update"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseline := filepath.Join(t.TempDir(), "baseline.txt")
			if err := os.WriteFile(baseline, []byte(strings.Join(tt.giveBaseline, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runConformance(t, "-baseline", baseline)
			if code != tt.wantCode {
				t.Errorf("run(-baseline) = %d, want %d\n%s", code, tt.wantCode, out)
			}
			if got := lastLine(out); got != tt.wantLastLine {
				t.Errorf("run(-baseline) last line = %q, want %q", got, tt.wantLastLine)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("run(-baseline) = %q, want it to contain %q", out, tt.wantOut)
			}
		})
	}
}

func TestClassesAndFailures(t *testing.T) {
	code, out := runConformance(t, "-failures")
	if code != 0 {
		t.Fatalf("run(-failures) = %d, want 0 without a baseline\n%s", code, out)
	}
	for _, s := range []string{
		"Want fail, got pass",
		gpolKey,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("run(-failures) = %q, want it to contain %q", out, s)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, give := range [][]string{{"-update"}, {"-nope"}, {"-baseline", "testdata/missing.txt"}} {
		if code, out := runConformance(t, give...); code != 2 {
			t.Errorf("run(%q) = %d, want 2\n%s", give, code, out)
		}
	}
}
