package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/server"
)

// runWithin runs a command line and fails the test when it does not end
// in time (a read blocked on a named pipe).
func runWithin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCmd(t, args...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errOut
	case <-time.After(30 * time.Second):
		t.Fatalf("verdict %s still running after 30s", strings.Join(args, " "))
		return 0, "", ""
	}
}

// copyInto copies files into dir, keeping their base names.
func copyInto(t *testing.T, dir string, files ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNamedPipesAreSkipped(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	copyInto(t, res, exampleResources+"/workloads.yaml")
	fifo := mkfifo(t, filepath.Join(res, "fifo.yaml"))
	suite := filepath.Join(dir, "suite")
	copyInto(t, suite, testdata+"/validate/require-team-label.yaml")
	copyInto(t, filepath.Join(suite, ".kyverno-test"), testdata+"/validate/.kyverno-test/kyverno-test.yaml", testdata+"/validate/.kyverno-test/resources.yaml")
	testFIFO := mkfifo(t, filepath.Join(suite, "more", "kyverno-test.yaml"))

	tests := []struct {
		name       string
		give, same []string // same: the command without the pipe, whose output it must print
		wantFIFO   string
	}{
		{name: "apply", give: []string{"apply", examplePolicies, "--resource", res}, same: []string{"apply", examplePolicies, "--resource", exampleResources}, wantFIFO: fifo},
		{name: "test", give: []string{"test", suite}, same: []string{"test", testdata + "/validate"}, wantFIFO: testFIFO},
		{name: "eval", give: []string{"eval", "--server", addr, "-f", res}, same: []string{"eval", "--server", addr, "-f", exampleResources}, wantFIFO: fifo},
		{name: "scan", give: []string{"scan", "--server", addr, "-f", res}, same: []string{"scan", "--server", addr, "-f", exampleResources}, wantFIFO: fifo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runWithin(t, tt.give...)
			wantCode, wantOut, _ := runCmd(t, tt.same...)
			wantOut = strings.ReplaceAll(wantOut, testdata+"/validate", suite)
			if code != wantCode || out != wantOut {
				t.Errorf("verdict %v = %d\n%s\nwant %d\n%s", tt.give, code, out, wantCode, wantOut)
			}
			if !strings.Contains(errOut, tt.wantFIFO) || !strings.Contains(errOut, "not a regular file") {
				t.Errorf("verdict %v stderr = %q, want a warning naming %s", tt.give, errOut, tt.wantFIFO)
			}
		})
	}
}

func TestNamedPipeArguments(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "fifo.yaml"))
	tests := []struct {
		name     string
		give     []string
		wantCode int
	}{
		{name: "apply resource", give: []string{"apply", examplePolicies, "--resource", fifo}, wantCode: exitUsage},
		{name: "apply policy", give: []string{"apply", fifo, "--resource", exampleResources}, wantCode: exitUsage},
		{name: "apply values", give: []string{"apply", examplePolicies, "--resource", exampleResources, "--values-file", fifo}, wantCode: exitUsage},
		{name: "test", give: []string{"test", fifo}, wantCode: 1},
		{name: "eval", give: []string{"eval", "--server", addr, "-f", fifo}, wantCode: exitUsage},
		{name: "scan", give: []string{"scan", "--server", addr, "-f", fifo}, wantCode: exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runWithin(t, tt.give...)
			if code != tt.wantCode || !strings.Contains(out+errOut, fifo+": not a regular file (a named pipe)") {
				t.Errorf("verdict %v = %d\nstdout %q\nstderr %q\nwant %d and an error naming %s", tt.give, code, out, errOut, tt.wantCode, fifo)
			}
		})
	}
}
