package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/internal/testing/hostile"
)

const hostilePod = `apiVersion: v1
kind: Pod
metadata: {name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, namespace: default}
spec:
  containers: [{name: c, image: nginx}]
`

// writeTemp writes content to name in a new temporary folder.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// verdict apply of the policies of issue 17: a JMESPath expression nested a
// million deep (a stack overflow in go-jmespath's parser) and nine nested
// replace_all calls (10 GB on the first Pod) end with a clear error and a
// non-zero exit code.
func TestApplyHostilePolicies(t *testing.T) {
	tests := []struct {
		name         string
		givePolicy   string
		wantCode     int
		wantOut      []string // in stdout, where apply lists the policies it skipped
		wantErr      string   // in stderr
		wantLastLine string
	}{
		{
			name:       "a million nested parentheses",
			givePolicy: hostile.MessagePolicy("hostile", hostile.Expressions()[0].Expr),
			wantCode:   1,
			wantOut:    []string{"1. hostile: compile ClusterPolicy \"hostile\": ", "policy.yaml:", ": spec.rules[0].validate.message: ", "MaxExpressionBytes"},
			wantErr:    "exit as there are policy errors",
		},
		{
			name:       "nested brackets",
			givePolicy: hostile.MessagePolicy("hostile", hostile.Expressions()[1].Expr),
			wantCode:   1,
			wantOut:    []string{"1. hostile: compile ClusterPolicy \"hostile\": ", "policy.yaml:", ": spec.rules[0].validate.message: ", "MaxExpressionNesting"},
			wantErr:    "exit as there are policy errors",
		},
		{
			name:         "nine nested replace_all",
			givePolicy:   hostile.AmplifyPolicy(),
			wantCode:     1,
			wantErr:      "exit as there are policy errors",
			wantLastLine: "pass: 0, fail: 0, warn: 0, error: 1, skip: 0 ",
		},
	}
	pod := writeTemp(t, "pod.yaml", hostilePod)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "apply", writeTemp(t, "policy.yaml", tt.givePolicy), "-r", pod)
			if code != tt.wantCode {
				t.Errorf("run(apply %s) = %d, want %d\nstdout: %.500s\nstderr: %.500s", tt.name, code, tt.wantCode, stdout, stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("run(apply %s) stdout = %.500q, want it to contain %q", tt.name, stdout, want)
				}
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("run(apply %s) stderr = %.500q, want it to contain %q", tt.name, stderr, tt.wantErr)
			}
			if len(stdout)+len(stderr) > 4096 {
				t.Errorf("run(apply %s) wrote %d bytes, want at most 4 KiB", tt.name, len(stdout)+len(stderr))
			}
			if tt.wantLastLine != "" {
				lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
				if got := lines[len(lines)-1]; got != tt.wantLastLine {
					t.Errorf("run(apply %s) last line = %q, want %q", tt.name, got, tt.wantLastLine)
				}
			}
		})
	}
}
