package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// startRun starts verdict run on a free port with its report store at db
// and returns its address; the run stops when the test ends.
func startRun(t *testing.T, db string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"run", "--policies", "../../examples/policies", "--listen", "127.0.0.1:0", "--log-level", "error", "--reports-db", db}, outW, &stderr)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("verdict run after Ctrl-C: exit code %d, want 0 (stderr %q)", c, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("verdict run did not stop within 30s")
		}
	})
	addrRE := regexp.MustCompile(`server on (127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, outR)
			return m[1]
		}
	}
	t.Fatalf("verdict run printed no address (stderr %q)", stderr.String())
	return ""
}

// runVerdict runs a verdict command line and returns its exit code and output.
func runVerdict(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// pollVerdict runs a command line until done accepts its output, for at
// most 10s.
func pollVerdict(t *testing.T, done func(stdout string) bool, args ...string) (int, string, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, errOut := runVerdict(t, args...)
		if done(out) || time.Now().After(deadline) {
			return code, out, errOut
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// table drops the AGE column of a kubectl-like table.
func table(out string) []string {
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			rows = append(rows, strings.Join(f[:len(f)-1], " "))
		}
	}
	return rows
}

// TestRunReports runs what docs/reports.md shows: verdict run, verdict
// eval of the example resources, verdict reports get; then a restart keeps
// the reports and a DELETE removes the entries.
func TestRunReports(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reports.db")
	addr := startRun(t, db)
	// Wait until the server serves its policies.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, _ := runVerdict(t, "eval", "--server", addr, "-f", "../../examples/resources")
		if code == 1 { // the debug Pod is denied
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("verdict eval exit code %d, want 1", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := []string{
		"NAMESPACE NAME PASS FAIL WARN ERROR SKIP",
		"shop cpol-disallow-latest-tag 4 0 0 0 0",
		"shop cpol-require-requests-limits 1 1 0 0 0",
		"shop cpol-require-team-label 2 0 0 0 0",
	}
	// Results reach the writer asynchronously: poll until every
	// evaluation is counted (the rows appear before the last counts).
	code, out, errOut := pollVerdict(t, func(out string) bool { return cmp.Equal(want, table(out)) }, "reports", "get", "-A", "--server", addr)
	if code != 0 {
		t.Fatalf("verdict reports get -A: exit code %d (stderr %q)", code, errOut)
	}
	if diff := cmp.Diff(want, table(out)); diff != "" {
		t.Errorf("verdict reports get -A mismatch (-want +got):\n%s", diff)
	}
	code, out, _ = runVerdict(t, "reports", "get", "polr", "cpol-require-requests-limits", "-n", "shop", "--server", addr, "-o", "json")
	var rep struct {
		Kind    string
		Results []struct {
			Rule, Result string
			Resources    []struct{ Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("verdict reports get -o json: exit code %d, %v: %s", code, err, out)
	}
	var got []string
	for _, r := range rep.Results {
		for _, res := range r.Resources {
			got = append(got, r.Rule+" "+res.Kind+"/"+res.Name+" "+r.Result)
		}
	}
	wantResults := []string{"autogen-validate-resources Deployment/api fail", "validate-resources Pod/web pass"}
	if diff := cmp.Diff(wantResults, got); diff != "" {
		t.Errorf("verdict reports get -o json results mismatch (-want +got):\n%s", diff)
	}
	code, _, errOut = runVerdict(t, "reports", "get", "cpolr", "--server", addr)
	if code != 0 || !strings.Contains(errOut, "No resources found") {
		t.Errorf("verdict reports get cpolr = exit code %d, stderr %q; want 0 and No resources found", code, errOut)
	}
	if code, _, _ := runVerdict(t, "eval", "--server", addr, "-f", "../../examples/resources", "--operation", "DELETE"); code != 0 {
		t.Errorf("verdict eval --operation DELETE: exit code %d, want 0", code)
	}
	code, out, errOut = pollVerdict(t, func(out string) bool { return out == "" }, "reports", "get", "-A", "--server", addr)
	if code != 0 || out != "" || !strings.Contains(errOut, "No resources found") {
		t.Errorf("verdict reports get -A after DELETE = exit code %d, %q, %q; want no reports", code, out, errOut)
	}
}

func TestReportsGetFlags(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want string
	}{
		{"bad kind", []string{"reports", "get", "pods"}, "want polr or cpolr"},
		{"bad output", []string{"reports", "get", "-o", "wide"}, `--output "wide": want yaml or json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runVerdict(t, tt.give...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("verdict %v = exit code %d, stderr %q; want %d naming %q", tt.give, code, errOut, exitUsage, tt.want)
			}
		})
	}
}
