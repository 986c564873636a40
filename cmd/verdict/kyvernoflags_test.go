package main

import (
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// kyvernoGlobalFlags are the global flags of kyverno 1.19's CLI (its
// main adds klog's flag set to every command), from the "Global Flags:"
// of `kyverno apply --help`: name and shorthand.
var kyvernoGlobalFlags = [][2]string{
	{"add_dir_header", ""}, {"alsologtostderr", ""}, {"alsologtostderrthreshold", ""},
	{"legacy_stderr_threshold_behavior", ""}, {"log_backtrace_at", ""}, {"log_dir", ""},
	{"log_file", ""}, {"log_file_max_size", ""}, {"logtostderr", ""}, {"one_output", ""},
	{"skip_headers", ""}, {"skip_log_headers", ""}, {"stderrthreshold", ""},
	{"v", "v"}, {"vmodule", ""},
}

// kyvernoApplyFlags are the flags of `kyverno apply --help` (v1.19.0).
var kyvernoApplyFlags = [][2]string{
	{"audit-warn", ""}, {"batch-size", ""}, {"cluster", "c"}, {"cluster-wide-resources", ""},
	{"concurrent", ""}, {"context", ""}, {"context-file", ""}, {"continue-on-error", ""},
	{"continue-on-fail", ""}, {"crd-paths", ""}, {"crd-path", ""}, {"detailed-results", ""},
	{"envoy-payload", ""}, {"exception", "e"}, {"exceptions", ""},
	{"exceptions-with-resources", ""}, {"exceptions-within-policies", ""},
	{"exceptions-within-resources", ""}, {"generate-exceptions", ""},
	{"generated-exception-ttl", ""}, {"git-branch", "b"}, {"help", "h"}, {"http-payload", ""},
	{"json", ""}, {"kubeconfig", ""}, {"namespace", "n"}, {"output", "o"},
	{"output-format", ""}, {"parameter-resource", ""}, {"password", ""},
	{"policy-report", "p"}, {"registry", ""}, {"remove-color", ""}, {"resource", "r"},
	{"resources", ""}, {"set", "s"}, {"show-performance", ""}, {"stdin", "i"}, {"table", "t"},
	{"target-resource", ""}, {"target-resources", ""}, {"userinfo", "u"}, {"username", ""},
	{"values-file", "f"}, {"warn-exit-code", ""}, {"warn-no-pass", ""},
}

// kyvernoTestFlags are the flags of `kyverno test --help` (v1.19.0),
// --kubeconfig among its global flags. Its -o is --output-format, which
// Verdict calls --output (with --output-format an alias).
var kyvernoTestFlags = [][2]string{
	{"detailed-results", ""}, {"fail-only", ""}, {"file-name", "f"}, {"git-branch", "b"},
	{"help", "h"}, {"output-format", ""}, {"output", "o"}, {"registry", ""},
	{"remove-color", ""}, {"require-tests", ""}, {"test-case-selector", "t"},
	{"kubeconfig", ""},
}

func TestKyvernoFlagsKnown(t *testing.T) {
	tests := []struct {
		name  string
		cmd   *cobra.Command
		flags [][2]string
	}{
		{name: "apply", cmd: newApplyCmd(), flags: append(kyvernoApplyFlags, kyvernoGlobalFlags...)},
		{name: "test", cmd: newTestCmd(), flags: append(kyvernoTestFlags, kyvernoGlobalFlags...)},
	}
	// kyverno's other commands take the global flags too.
	tests = append(tests, struct {
		name  string
		cmd   *cobra.Command
		flags [][2]string
	}{name: "version", cmd: newVersionCmd(), flags: kyvernoGlobalFlags})
	for _, sub := range newJPCmd().Commands() {
		tests = append(tests, struct {
			name  string
			cmd   *cobra.Command
			flags [][2]string
		}{name: "jp " + sub.Name(), cmd: sub, flags: kyvernoGlobalFlags})
	}
	for _, tt := range tests {
		tt.cmd.InitDefaultHelpFlag()
		for _, fl := range tt.flags {
			f := tt.cmd.Flags().Lookup(fl[0])
			if f == nil {
				f = tt.cmd.InheritedFlags().Lookup(fl[0])
			}
			if f == nil {
				t.Errorf("verdict %s: flag --%s = unknown, want known", tt.name, fl[0])
				continue
			}
			if f.Shorthand != fl[1] {
				t.Errorf("verdict %s: shorthand of --%s = %q, want %q", tt.name, fl[0], f.Shorthand, fl[1])
			}
		}
	}
}

func TestKyvernoFlagsRefused(t *testing.T) {
	const flags = "testdata/flags/"
	apply := []string{"apply", flags + "policy.yaml"}
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{name: "envoy", args: append(apply, "--envoy-payload", "p.json"), want: "apply --envoy-payload is not supported"},
		{name: "http", args: append(apply, "--http-payload", "p.json"), want: "apply --http-payload is not supported"},
		{name: "json not an object", args: append(apply, "--json", flags+"configmaps.yaml"), want: "a JSON payload must be one object"},
		{name: "json and resource", args: append(apply, "--json", "p.json", "-r", flags+"configmaps.yaml"), want: "both resource and json files can not be used together"},
		{name: "registry and an imageRegistry entry", args: []string{"apply", flags + "registry-policy.yaml", "-r", flags + "privileged-pod.yaml", "--registry"}, want: "policy check-image-user, context entry imageData: verdict's CLI does not load imageRegistry context entries"},
		{name: "git url", args: []string{"apply", "https://github.com/kyverno/policies/pod-security", "-b", "main", "-r", flags + "configmaps.yaml"}, want: "verdict does not clone git repositories"},
		{name: "crd-paths and kubeconfig", args: append(apply, "-r", flags+"configmaps.yaml", "--crd-paths", "crd.yaml", "--kubeconfig", "kc"), want: "crd-paths and kubeconfig flags are mutually exclusive"},
		{name: "crd-paths folder", args: append(apply, "-r", flags+"configmaps.yaml", "--crd-paths", flags), want: "CRD file must have .yaml or .yml extension"},
		{name: "test git url", args: []string{"test", "https://github.com/kyverno/policies", "--git-branch", "main"}, want: "verdict does not clone git repositories"},
		{name: "bad -v", args: append(apply, "-r", flags+"configmaps.yaml", "-v", "x"), want: `invalid argument "x" for "-v, --v" flag`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("run(%q) = %d, stderr %q, want %d, stderr with %q", tt.args, code, stderr, exitUsage, tt.want)
			}
		})
	}
}

// TestApplyKyvernoFlags compares verdict apply's output with kyverno
// apply 1.19's, recorded in testdata/flags (kyverno apply ARGS > FILE).
func TestApplyKyvernoFlags(t *testing.T) {
	const flags = "testdata/flags/"
	tests := []struct {
		name     string
		args     []string
		want     string // file of kyverno's stdout
		wantCode int
		// anyOrder compares the "---" documents in any order: kyverno
		// prints the exceptions of --generate-exceptions in map order.
		anyOrder bool
		// reportTime masks the seconds of the report's timestamps.
		reportTime bool
	}{
		{name: "exceptions among policies ignored", args: []string{flags + "policy-with-exception.yaml", "-r", flags + "configmaps.yaml"}, want: "within-policies-off.txt", wantCode: 1},
		{name: "--exceptions-within-policies", args: []string{flags + "policy-with-exception.yaml", "-r", flags + "configmaps.yaml", "--exceptions-within-policies"}, want: "within-policies.txt"},
		{name: "--exceptions-within-resources", args: []string{flags + "policy.yaml", "-r", flags + "configmaps-with-exception.yaml", "--exceptions-within-resources"}, want: "within-resources.txt"},
		{name: "--exceptions-with-resources", args: []string{flags + "policy.yaml", "-r", flags + "configmaps-with-exception.yaml", "--exceptions-with-resources"}, want: "within-resources.txt"},
		{name: "--exceptions-within-resources instead of -e", args: []string{flags + "policy.yaml", "-r", flags + "configmaps-with-exception.yaml", "--exceptions-within-resources", "-e", flags + "exception.yaml"}, want: "within-resources.txt"},
		{name: "--exceptions-within-resources from stdin", args: []string{flags + "policy.yaml", "-r", "-", "--exceptions-within-resources"}, want: "within-resources.txt"},
		{name: "--crd-paths", args: []string{testdata + "/mpolcrd/policies.yaml", "-r", testdata + "/mpolcrd/resources.yaml", "--crd-paths", testdata + "/mpolcrd/crds/gadget.yaml"}, want: "crd-paths.txt", wantCode: 1},
		{name: "--generate-exceptions", args: []string{flags + "pod-policy.yaml", flags + "policy.yaml", "-r", flags + "workloads.yaml", "-r", flags + "configmaps.yaml", "--generate-exceptions"}, want: "generate-exceptions.txt", wantCode: 1, anyOrder: true},
		{name: "--generate-exceptions json without ttl", args: []string{flags + "pod-policy.yaml", "-r", flags + "workloads.yaml", "--generate-exceptions", "--output-format", "json", "--generated-exception-ttl", "0s"}, want: "generate-exceptions-json.txt", wantCode: 1, anyOrder: true},
		{name: "--generate-exceptions podSecurity", args: []string{flags + "pss-policy.yaml", "-r", flags + "privileged-pod.yaml", "--generate-exceptions"}, want: "generate-exceptions-podsecurity.txt", wantCode: 1, anyOrder: true},
		{name: "--generate-exceptions mutated", args: []string{testdata + "/mutate/add-owner.yaml", "-r", testdata + "/mutate/configmap.yaml", "--generate-exceptions"}, want: "generate-exceptions-mutate.txt"},
		{name: "--policy-report mutated", args: []string{testdata + "/mutate/add-owner.yaml", "-r", testdata + "/mutate/configmap.yaml", "-p"}, want: "policy-report-mutate.txt", reportTime: true},
		{name: "--registry without imageRegistry entries", args: []string{flags + "policy-with-exception.yaml", "-r", flags + "configmaps.yaml", "--registry"}, want: "within-policies-off.txt", wantCode: 1},
		{name: "--json", args: []string{flags + "json-policy.yaml", flags + "policy.yaml", "--json", flags + "payload-bad.json", "--json", flags + "payload-good.json"}, want: "json.txt", wantCode: 1},
		{name: "--json --generate-exceptions", args: []string{flags + "json-policy.yaml", "--json", flags + "payload-bad.json", "--json", flags + "payload-good.json", "--generate-exceptions"}, want: "json-generate-exceptions.txt", wantCode: 1, anyOrder: true},
		{name: "accepted flags", args: []string{flags + "policy.yaml", "-r", flags + "configmaps-with-exception.yaml", "--exceptions-within-resources",
			"-v", "3", "--vmodule", "x=2", "--logtostderr", "--stderrthreshold", "INFO", "--concurrent", "4", "--continue-on-error=false", "--continue-on-fail",
			"-b", "main", "--username", "u", "--password", "p", "--generated-exception-ttl", "1h", "--cluster-wide-resources", "--crd-path", testdata + "/mpolcrd/crds/gadget.yaml"}, want: "within-resources.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := os.ReadFile(flags + tt.want)
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"apply"}, tt.args...)
			stdin, err := os.Open(flags + "configmaps-with-exception.yaml")
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			var stdout, stderr strings.Builder
			code := runIn(t.Context(), args, stdin, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr: %s", args, code, tt.wantCode, stderr.String())
			}
			got, wantOut := stdout.String(), string(want)
			if tt.anyOrder {
				got, wantOut = sortedDocuments(got), sortedDocuments(wantOut)
			}
			if tt.reportTime {
				seconds := regexp.MustCompile(`seconds: [0-9]+`)
				got, wantOut = seconds.ReplaceAllString(got, "seconds: 0"), seconds.ReplaceAllString(wantOut, "seconds: 0")
			}
			if diff := cmp.Diff(wantOut, got); diff != "" {
				t.Errorf("run(%q) stdout mismatch (-kyverno +verdict):\n%s", args, diff)
			}
		})
	}
}

// TestTestRegistry checks verdict test --registry fails the results of a
// test whose policies have an imageRegistry context entry, with the
// reason.
func TestTestRegistry(t *testing.T) {
	args := []string{"test", "testdata/flags/registrytest", "--registry", "-o", "json"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 1 {
		t.Fatalf("run(%q) = %d, want 1; stderr: %s", args, code, stderr)
	}
	if want := "verdict's CLI does not load imageRegistry context entries"; !strings.Contains(stdout, want) {
		t.Errorf("run(%q) stdout = %q, want it to hold %q", args, stdout, want)
	}
}

// sortedDocuments is out with its "---\n" documents sorted.
func sortedDocuments(out string) string {
	docs := strings.Split(out, "---\n")
	sort.Strings(docs)
	return strings.Join(docs, "---\n")
}

func TestApplyShowPerformance(t *testing.T) {
	args := []string{"apply", "testdata/flags/policy.yaml", "-r", "testdata/flags/configmaps.yaml", "--show-performance", "--parallel", "2"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 1 {
		t.Fatalf("run(%q) = %d, want 1; stderr: %s", args, code, stderr)
	}
	for _, want := range []string{"\nPerformance:\n  Duration: ", "\n  Resources evaluated: 2 (", "\n  Policy rules: 1\n  Workers (--parallel): 2\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run(%q) stderr = %q, want it to hold %q", args, stderr, want)
		}
	}
	if strings.Contains(stdout, "Performance") {
		t.Errorf("run(%q) stdout = %q, want no performance lines", args, stdout)
	}
}

// TestApplyVerbosity checks -v sets the level of apply's log lines on
// stderr: none at the default, info from 2.
func TestApplyVerbosity(t *testing.T) {
	tests := []struct {
		v    string
		want bool // the info line
	}{
		{"0", false}, {"1", false}, {"2", true}, {"5", true},
		{"", false}, // not given: klog's default, whatever an earlier run set
	}
	for _, tt := range tests {
		args := []string{"apply", "testdata/flags/policy.yaml", "-r", "testdata/flags/configmaps.yaml"}
		if tt.v != "" {
			args = append(args, "-v", tt.v)
		}
		_, _, stderr := runCmd(t, args...)
		if got := strings.Contains(stderr, "level=INFO msg=applied policyRules=1 resources=2 "); got != tt.want {
			t.Errorf("run(%q) stderr = %q, info line %v, want %v", args, stderr, got, tt.want)
		}
	}
}

func TestSlogLevel(t *testing.T) {
	tests := []struct {
		v    int
		want slog.Level
	}{
		{0, slog.LevelWarn}, {1, slog.LevelWarn}, {2, slog.LevelInfo}, {3, slog.LevelInfo},
		{4, slog.LevelDebug}, {10, slog.LevelDebug},
	}
	for _, tt := range tests {
		if got := slogLevel(tt.v); got != tt.want {
			t.Errorf("slogLevel(%d) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestTestKyvernoFlags checks kyverno test's flags give the output of
// Verdict's own: --output-format as -o ("" is kyverno's default, the
// tables), and the flags that change nothing in verdict test.
func TestTestKyvernoFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		same []string // the flags of the same output
	}{
		{name: "--output-format json", args: []string{"--output-format", "json"}, same: []string{"-o", "json"}},
		{name: "--output-format empty (kyverno's default)", args: []string{"--output-format", ""}, same: nil},
		{name: "klog, kubeconfig, git-branch", args: []string{"-v", "2", "--kubeconfig", "kc", "-b", "main", "--add_dir_header"}, same: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"test", testdata + "/mutate"}, tt.args...)
			code, stdout, stderr := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("run(%q) = %d, want 0; stderr: %s", args, code, stderr)
			}
			sameArgs := append([]string{"test", testdata + "/mutate"}, tt.same...)
			_, want, _ := runCmd(t, sameArgs...)
			if want == "" || stdout != want {
				t.Errorf("run(%q) stdout = %q, want run(%q)'s %q", args, stdout, sameArgs, want)
			}
		})
	}
}
