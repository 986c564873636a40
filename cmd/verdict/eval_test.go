package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/server"
)

const (
	examplePolicies  = "../../examples/policies"
	exampleResources = "../../examples/resources"
)

// startEvalServer runs a decision server with the example policies on a
// loopback port until the test ends and returns its address.
func startEvalServer(t *testing.T, opts server.Options) string {
	t.Helper()
	opts.Sources = []server.PolicySource{&server.FolderSource{Dir: examplePolicies}}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server Run() = %v", err)
		}
	})
	addr := lis.Addr().String()
	c, err := client.Dial(addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.CheckHealth(t.Context()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("server not SERVING after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return addr
}

// runCmd runs the command line and returns its exit code and outputs.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// violations are the blocks of apply-style output that name the failed
// rules of a policy on a resource, sorted (apply keeps the order of the
// policy files, the server sorts policies by name), and the counts line
// (without the trailing space apply prints as Kyverno does).
func violations(out string) []string {
	var blocks []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, " ")
		switch {
		case strings.HasPrefix(l, "policy "), strings.HasPrefix(l, "pass: "):
			blocks = append(blocks, l)
		case len(l) > 2 && l[0] >= '1' && l[0] <= '9' && strings.Contains(l, " - ") && len(blocks) > 0:
			blocks[len(blocks)-1] += "\n" + l
		}
	}
	sort.Strings(blocks)
	return blocks
}

func TestEvalLikeApply(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	code, out, errOut := runCmd(t, "eval", "--server", addr, "-f", exampleResources)
	if code != 1 {
		t.Errorf("eval exit code = %d, want 1 (a Pod is denied); stderr:\n%s", code, errOut)
	}
	_, applyOut, _ := runCmd(t, "apply", examplePolicies, "--resource", exampleResources)
	if diff := cmp.Diff(violations(applyOut), violations(out)); diff != "" {
		t.Errorf("eval output differs from apply's (-apply +eval):\n%s", diff)
	}
	for _, want := range []string{"Evaluating 3 resource(s) on " + addr, "denied: 1 resource(s)\n- shop/Pod/debug\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "exit as 1 resource(s) were denied") {
		t.Errorf("eval stderr = %q, want the denial", errOut)
	}
}

func TestEvalExitCodes(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeTestFile(t, good, `apiVersion: v1
kind: Pod
metadata: {name: ok, labels: {team: shop}}
spec:
  containers:
  - name: c
    image: nginx:1.27
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {memory: 128Mi}
`)
	audit := filepath.Join(dir, "audit.yaml")
	writeTestFile(t, audit, `apiVersion: v1
kind: Pod
metadata: {name: latest, labels: {team: shop}}
spec:
  containers:
  - name: c
    image: nginx:latest
`)
	tests := []struct {
		name         string
		give         []string
		wantCode     int
		wantLastLine string
		wantErr      string
		wantOut      string
	}{
		{name: "allowed", give: []string{"-f", good}, wantCode: 0, wantLastLine: "pass: 4, fail: 0, warn: 0, error: 0, skip: 0"},
		{name: "audit failures are allowed", give: []string{"-f", audit}, wantCode: 0, wantLastLine: "pass: 2, fail: 2, warn: 0, error: 0, skip: 0"},
		{name: "background never denies", give: []string{"-f", exampleResources, "--background"}, wantCode: 0},
		{name: "policy selection", give: []string{"-f", exampleResources, "--policy", "disallow-latest-tag"}, wantCode: 0, wantLastLine: "pass: 5, fail: 1, warn: 0, error: 0, skip: 0"},
		{name: "unknown policy", give: []string{"-f", good, "--policy", "nope"}, wantCode: 2, wantErr: "could not be evaluated", wantOut: "policy_selector.names[0]: the server holds no usable policy"},
		{name: "bad output format", give: []string{"-f", good, "-o", "table"}, wantCode: 2, wantErr: "invalid output format"},
		{name: "bad operation", give: []string{"-f", good, "--operation", "PATCH"}, wantCode: 2, wantErr: "invalid operation"},
		{name: "missing file", give: []string{"-f", filepath.Join(dir, "none.yaml")}, wantCode: 2, wantErr: "no such file"},
		{name: "no server", give: []string{"-f", good, "--server", "127.0.0.1:1"}, wantCode: 2, wantErr: "Unavailable"},
		{name: "token to a remote server without TLS", give: []string{"-f", good, "--server", "verdict.example:9443", "--token", "t"}, wantCode: 2, wantErr: "needs TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"eval", "--server", addr}, tt.give...)
			code, out, errOut := runCmd(t, args...)
			if code != tt.wantCode {
				t.Errorf("eval %v exit code = %d, want %d; stdout:\n%s\nstderr:\n%s", tt.give, code, tt.wantCode, out, errOut)
			}
			if tt.wantLastLine != "" {
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if got := lines[len(lines)-1]; got != tt.wantLastLine {
					t.Errorf("eval %v last line = %q, want %q", tt.give, got, tt.wantLastLine)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("eval %v stderr = %q, want it to contain %q", tt.give, errOut, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("eval %v stdout = %q, want it to contain %q", tt.give, out, tt.wantOut)
			}
		})
	}
}

func TestEvalRawOutput(t *testing.T) {
	addr := startEvalServer(t, server.Options{})
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := runCmd(t, "eval", "--server", addr, "-f", exampleResources, "-o", format)
			if code != 1 {
				t.Errorf("eval -o %s exit code = %d, want 1; stderr:\n%s", format, code, errOut)
			}
			var list []struct {
				Resource string
				Response struct {
					Allowed bool
					Results []struct{ Policy, Rule, Result, Type string }
				}
			}
			data := []byte(out)
			if format == "yaml" {
				var err error
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatalf("eval -o yaml: %v\n%s", err, out)
				}
			}
			if err := json.Unmarshal(data, &list); err != nil {
				t.Fatalf("eval -o %s: %v\n%s", format, err, out)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Resource+" allowed="+boolString(e.Response.Allowed))
			}
			want := []string{"shop/Pod/web allowed=true", "shop/Pod/debug allowed=false", "shop/Deployment/api allowed=true"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("eval -o %s decisions mismatch (-want +got):\n%s", format, diff)
			}
			// Results and rule types in Kyverno's words (policy report
			// results, engineapi.RuleType), not protobuf enum names.
			words := map[string]bool{}
			for _, e := range list {
				for _, r := range e.Response.Results {
					words[r.Result+" "+r.Type] = true
				}
			}
			wantWords := map[string]bool{"pass Validation": true, "fail Validation": true}
			if diff := cmp.Diff(wantWords, words); diff != "" {
				t.Errorf("eval -o %s results and types mismatch (-want +got):\n%s", format, diff)
			}
		})
	}
}

func TestEvalAuth(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeTestFile(t, tokenFile, "s3cret\n")
	addr := startEvalServer(t, server.Options{BearerTokens: []string{"s3cret"}})
	tests := []struct {
		name     string
		give     []string
		wantCode int
		wantErr  string
	}{
		{name: "token file", give: []string{"--token-file", tokenFile}, wantCode: 1},
		{name: "token flag", give: []string{"--token", "s3cret"}, wantCode: 1},
		{name: "no token", wantCode: 2, wantErr: "Unauthenticated"},
		{name: "wrong token", give: []string{"--token", "guess"}, wantCode: 2, wantErr: "Unauthenticated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"eval", "--server", addr, "-f", exampleResources}, tt.give...)
			code, _, errOut := runCmd(t, args...)
			if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("eval %v = exit %d, stderr %q; want exit %d, stderr containing %q", tt.give, code, errOut, tt.wantCode, tt.wantErr)
			}
		})
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
