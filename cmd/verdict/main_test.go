package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testdata = "../../kyvernotest/testdata"

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata")

func TestRun(t *testing.T) {
	tests := []struct {
		name         string
		give         []string
		stdin        string // file read as standard input
		wantCode     int
		wantLastLine string
		wantOut      []string
		wantErr      string
	}{
		{
			name:         "test: passing suite",
			give:         []string{"test", testdata + "/validate"},
			wantCode:     0,
			wantLastLine: "4 passed, 0 failed",
			wantOut:      []string{"Test require-team-label", "autogen-check-team", "Excluded"},
		},
		{
			name:         "test: failures give exit code 1",
			give:         []string{"test", testdata},
			wantCode:     1,
			wantLastLine: "28 passed, 3 failed",
			wantOut:      []string{"Not found", "add-owner-label", `unknown field "expectedResult"`},
		},
		{
			name:         "test: fail only",
			give:         []string{"test", testdata, "--fail-only", "--remove-color"},
			wantCode:     1,
			wantLastLine: "28 passed, 3 failed",
		},
		{
			name:     "test: bad output format",
			give:     []string{"test", testdata, "-o", "html"},
			wantCode: 2,
			wantErr:  "invalid output format",
		},
		{
			name:     "test: require tests",
			give:     []string{"test", testdata, "--file-name", "none.yaml", "--require-tests"},
			wantCode: 1,
			wantErr:  "no tests found",
		},
		{
			name:     "test: missing path",
			give:     []string{"test", testdata + "/nope"},
			wantCode: 2,
			wantErr:  "Error:",
		},
		{
			name:         "apply: violations give exit code 1",
			give:         []string{"apply", testdata + "/validate/require-team-label.yaml", "--resource", testdata + "/validate/.kyverno-test/resources.yaml"},
			wantCode:     1,
			wantLastLine: "pass: 2, fail: 1, warn: 0, error: 0, skip: 0 ",
			wantOut:      []string{"Applying 3 policy rule(s) to 4 resource(s)...", "policy require-team-label -> resource shop/Pod/bad-pod failed:"},
			wantErr:      "exit as there are policy violations",
		},
		{
			name: "apply: audit warnings with a warn exit code",
			give: []string{"apply", testdata + "/values/allowed-image.yaml", "-r", testdata + "/values/.kyverno-test/pods.yaml",
				"-f", testdata + "/values/.kyverno-test/values.yaml", "-u", testdata + "/values/.kyverno-test/userinfo.yaml", "--audit-warn", "--warn-exit-code", "3"},
			wantCode:     3,
			wantLastLine: "pass: 4, fail: 0, warn: 1, error: 0, skip: 1 ",
		},
		{
			// kyverno apply v1.19.0 on the same files prints the same line.
			name:     "apply: the exceptions are counted in the Applying line",
			give:     []string{"apply", testdata + "/vpol/policies.yaml", "-r", testdata + "/vpol/resources.yaml", "-e", testdata + "/vpol/exceptions.yaml"},
			wantCode: 1,
			wantOut:  []string{"\nApplying 3 policy rule(s) to 6 resource(s) with 2 exception(s)...\n"},
		},
		{
			name:         "apply: --parallel 1 evaluates one resource after the other",
			give:         []string{"apply", testdata + "/validate/require-team-label.yaml", "-r", testdata + "/validate/.kyverno-test/resources.yaml", "--parallel", "1"},
			wantCode:     1,
			wantLastLine: "pass: 2, fail: 1, warn: 0, error: 0, skip: 0 ",
		},
		{
			name:     "apply: --parallel below 0",
			give:     []string{"apply", testdata + "/validate/require-team-label.yaml", "-r", testdata + "/validate/.kyverno-test/resources.yaml", "--parallel", "-1"},
			wantCode: 2,
			wantErr:  "invalid --parallel -1",
		},
		{
			name:     "apply: table",
			give:     []string{"apply", testdata + "/validate/require-team-label.yaml", "-r", testdata + "/validate/.kyverno-test/resources.yaml", "--table"},
			wantCode: 1,
			wantOut:  []string{"│ ID │ POLICY", "shop/Pod/bad-pod", "│ Fail"},
		},
		{
			name:         "apply: --resource - reads standard input",
			give:         []string{"apply", testdata + "/validate/require-team-label.yaml", "--resource", "-"},
			stdin:        testdata + "/validate/.kyverno-test/resources.yaml",
			wantCode:     1,
			wantLastLine: "pass: 2, fail: 1, warn: 0, error: 0, skip: 0 ",
			wantOut:      []string{"Applying 3 policy rule(s) to 4 resource(s)...", "policy require-team-label -> resource shop/Pod/bad-pod failed:"},
			wantErr:      "exit as there are policy violations",
		},
		{
			name:     "apply: standard input is read once",
			give:     []string{"apply", testdata + "/validate/require-team-label.yaml", "-r", "-", "-r", "-"},
			stdin:    testdata + "/validate/.kyverno-test/resources.yaml",
			wantCode: 2,
			wantErr:  `path "-" (standard input) named more than once`,
		},
		{
			name:         "apply: a policy path - reads standard input",
			give:         []string{"apply", "-", "--resource", testdata + "/validate/.kyverno-test/resources.yaml"},
			stdin:        testdata + "/validate/require-team-label.yaml",
			wantCode:     1,
			wantLastLine: "pass: 2, fail: 1, warn: 0, error: 0, skip: 0 ",
			wantOut:      []string{"Applying 3 policy rule(s) to 4 resource(s)...", "policy require-team-label -> resource shop/Pod/bad-pod failed:"},
			wantErr:      "exit as there are policy violations",
		},
		{
			name:     "apply: standard input for policies and resources",
			give:     []string{"apply", "-", "--resource", "-"},
			stdin:    testdata + "/validate/require-team-label.yaml",
			wantCode: 2,
			wantErr:  "a stdin pipe can be used for either policies or resources, not both",
		},
		{
			name:     "apply: needs resources",
			give:     []string{"apply", testdata + "/validate/require-team-label.yaml"},
			wantCode: 2,
			wantErr:  "apply needs --resource",
		},
		{
			name:     "unknown command",
			give:     []string{"nope"},
			wantCode: 2,
			wantErr:  "unknown command",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin io.Reader = strings.NewReader("")
			if tt.stdin != "" {
				f, err := os.Open(tt.stdin)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				stdin = f
			}
			var stdout, stderr bytes.Buffer
			code := runIn(context.Background(), tt.give, stdin, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.give, code, tt.wantCode, stdout.String(), stderr.String())
			}
			out := stdout.String()
			if tt.wantLastLine != "" {
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				if got := lines[len(lines)-1]; got != tt.wantLastLine {
					t.Errorf("run(%q) last line = %q, want %q", tt.give, got, tt.wantLastLine)
				}
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out, s) {
					t.Errorf("run(%q) stdout = %q, want it to contain %q", tt.give, out, s)
				}
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.give, stderr.String(), tt.wantErr)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"test", testdata + "/values", "--output", "json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("run(test -o json) = %d, want 0; stderr %s", code, stderr.String())
	}
	var got struct {
		Passed, Failed int
		Results        []map[string]any
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("run(test -o json) wrote invalid JSON %q: %v", stdout.String(), err)
	}
	if got.Passed != 6 || got.Failed != 0 || len(got.Results) != 6 {
		t.Errorf("run(test -o json) = %d passed, %d failed, %d results, want 6, 0, 6", got.Passed, got.Failed, len(got.Results))
	}
	for _, k := range []string{"test", "policy", "rule", "resource", "expected", "actual", "ok", "reason"} {
		if _, ok := got.Results[0][k]; !ok {
			t.Errorf("run(test -o json) result %v lacks %q", got.Results[0], k)
		}
	}
}

// TestRunPolicyReport checks apply --policy-report against golden files
// of what Kyverno 1.19's apply --policy-report prints for the same
// policies and resources (its printReports of report.ComputePolicyReports):
// an openreports.io/v1alpha1 ClusterReport "merged" with the
// ClusterPolicy's results, then "---" and the report of the namespaced
// Policy (kind PolicyReport under the openreports.io apiVersion, as
// Kyverno's CLI names it), in YAML (each document followed by an empty
// line) and JSON. The evaluation time is replaced by 0.
func TestRunPolicyReport(t *testing.T) {
	args := []string{"apply", testdata + "/validate/require-team-label.yaml", testdata + "/namespaced/no-latest.yaml",
		"-r", testdata + "/validate/.kyverno-test/resources.yaml", "-r", testdata + "/namespaced/pods.yaml", "--policy-report"}
	seconds := regexp.MustCompile(`("seconds":|seconds: )[0-9]+`)
	tests := []struct {
		format string
		golden string
	}{
		{"yaml", "policy-report.yaml"},
		{"json", "policy-report.json"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			code, out, errOut := runCmd(t, append(args, "--output-format", tt.format)...)
			if code != 1 {
				t.Errorf("run(apply --policy-report --output-format %s) = %d, want 1 (a rule failed); stderr: %s", tt.format, code, errOut)
			}
			got := seconds.ReplaceAllString(out, "${1}0")
			path := filepath.Join("testdata", tt.golden)
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("run(apply --policy-report --output-format %s) mismatch (-want +got):\n%s", tt.format, diff)
			}
		})
	}
}

// TestApplyStdinFlag checks apply -i/--stdin prints what kyverno apply -i
// prints: the mutated resources without the "Applying..." line and the
// "policy <p> applied to <resource>:" headers (processor.PolicyProcessor
// with Stdin), the rest unchanged.
func TestApplyStdinFlag(t *testing.T) {
	const resource = "\napiVersion: v1\ndata:\n    key: value\nkind: ConfigMap\nmetadata:\n    labels:\n        owner: platform\n    name: settings\n    namespace: default\n\n---\n" +
		"\n\nMutation:\nMutation has been applied successfully.\npass: 1, fail: 0, warn: 0, error: 0, skip: 0 \n"
	tests := []struct {
		name string
		give []string
		want string
	}{
		{name: "default", give: nil, want: "\nApplying 1 policy rule(s) to 1 resource(s)...\n\npolicy add-owner applied to default/ConfigMap/settings:" + resource},
		{name: "-i", give: []string{"-i"}, want: resource},
		{name: "--stdin", give: []string{"--stdin"}, want: resource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"apply", testdata + "/mutate/add-owner.yaml", "-r", testdata + "/mutate/configmap.yaml"}, tt.give...)
			code, got, errOut := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("run(%q) = %d, want 0; stderr: %s", args, code, errOut)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("run(%q) stdout mismatch (-want +got):\n%s", args, diff)
			}
		})
	}
}

// TestApplyPrintsErrors checks the default output of apply names every
// errored rule with its message (kyverno apply prints only the count for
// a validate rule), so that "error: 1" comes with its cause.
func TestApplyPrintsErrors(t *testing.T) {
	const policy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: typo
spec:
  rules:
  - name: check-name
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    validate:
      failureAction: Audit
      message: bad
      deny:
        conditions:
          any:
          - key: "{{ request.object.metadata.nosuch }}"
            operator: Equals
            value: x
`
	path := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", path, "-r", testdata + "/mutate/configmap.yaml"}
	code, got, errOut := runCmd(t, args...)
	if code != 1 {
		t.Errorf("run(%q) = %d, want 1; stderr: %s", args, code, errOut)
	}
	want := "\nApplying 1 policy rule(s) to 1 resource(s)...\n" +
		"policy typo -> resource default/ConfigMap/settings errored:\n" +
		`1 - check-name failed to check deny conditions: failed to substitute variables in condition key: failed to resolve request.object.metadata.nosuch at path : JMESPath query failed: Unknown key "nosuch" in path` + "\n" +
		"\npass: 0, fail: 0, warn: 0, error: 1, skip: 0 \n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run(%q) stdout mismatch (-want +got):\n%s", args, diff)
	}
}

// TestApplyMutateErrorLine checks the line of an errored mutate rule byte
// for byte as kyverno apply prints it: fmt.Fprintln("\nerror while
// applying mutate policy", name, "->", "resource", path, "\nerror: ",
// message), a space between each operand.
func TestApplyMutateErrorLine(t *testing.T) {
	const policy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: typo-mutate
spec:
  rules:
  - name: add-label
    match:
      any:
      - resources:
          kinds: [ConfigMap]
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            x: "{{ request.object.metadata.nosuch }}"
`
	path := filepath.Join(t.TempDir(), "typo-mutate.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", path, "-r", testdata + "/mutate/configmap.yaml"}
	code, got, errOut := runCmd(t, args...)
	if code != 1 {
		t.Errorf("run(%q) = %d, want 1; stderr: %s", args, code, errOut)
	}
	want := "\nerror while applying mutate policy typo-mutate -> resource default/ConfigMap/settings \n" +
		`error:  variable substitution failed: failed to resolve request.object.metadata.nosuch at path /mutate/patchStrategicMerge/metadata/labels/x: JMESPath query failed: Unknown key "nosuch" in path` + "\n" +
		"\npass: 0, fail: 0, warn: 0, error: 1, skip: 0 \n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("run(%q) stdout = %q, want it to end with %q", args, got, want)
	}
}

// TestRunTestFormats runs verdict test -o with each of kyverno test's
// formats on a suite with one wrong expectation. The markdown rows are
// kyverno test's (v1.19, same suite); the JUnit document is parsed as a CI
// system would.
func TestRunTestFormats(t *testing.T) {
	tests := []struct {
		name   string
		give   []string
		golden string
	}{
		{name: "junit", give: []string{"-o", "junit"}, golden: "testdata/test-junit.xml"},
		{name: "markdown", give: []string{"--output-format", "markdown", "--detailed-results"}, golden: "testdata/test-markdown.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"test", "testdata/testfail"}, tt.give...)
			if code := run(context.Background(), args, &stdout, &stderr); code != 1 {
				t.Fatalf("run(%q) = %d, want 1 (one expected result fails); stderr %s", args, code, stderr.String())
			}
			want, err := os.ReadFile(tt.golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
				t.Errorf("run(%q) mismatch (-want +got):\n%s", args, diff)
			}
		})
	}
	t.Run("junit parses", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"test", "testdata/testfail", "-o", "junit"}, &stdout, &stderr)
		type testcase struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		}
		var got struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Name  string     `xml:"name,attr"`
				Cases []testcase `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("verdict test -o junit = %q, not XML: %v", stdout.String(), err)
		}
		if got.Tests != 2 || got.Failures != 1 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 2 {
			t.Fatalf("verdict test -o junit = %+v, want 2 tests, 1 failure in 1 suite", got)
		}
		bad := got.Suites[0].Cases[1]
		if bad.Name != "v1/Pod/shop/bad-pod" || bad.Failure == nil || bad.Failure.Message != "Want pass, got fail" {
			t.Errorf("verdict test -o junit second testcase = %+v, want bad-pod failing with %q", bad, "Want pass, got fail")
		}
	})
	t.Run("one write", func(t *testing.T) {
		// The report is buffered: a report below outputBufferBytes is one
		// write, not one per line.
		var stdout countingWriter
		var stderr bytes.Buffer
		run(context.Background(), []string{"test", "testdata/testfail", "--detailed-results"}, &stdout, &stderr)
		if stdout.Len() == 0 || stdout.Len() >= outputBufferBytes || stdout.writes != 1 {
			t.Errorf("verdict test wrote %d bytes in %d writes, want 1 write of less than %d bytes", stdout.Len(), stdout.writes, outputBufferBytes)
		}
	})
	t.Run("unknown format", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"test", "testdata/testfail", "-o", "html"}, &stdout, &stderr); code != 2 {
			t.Errorf("run(test -o html) = %d, want 2", code)
		}
		if want := "expected (text, json, yaml, markdown, junit)"; !strings.Contains(stderr.String(), want) {
			t.Errorf("run(test -o html) stderr = %q, want it to contain %q", stderr.String(), want)
		}
	})
}

// TestApplyInvalidVariable: a misspelled variable makes the policy
// invalid, as Kyverno's allowed-variables check does, with Kyverno's
// message (kyverno apply v1.19: "1. typo: policy contains invalid
// variables: ..."), the file, the line of the field and its path, once
// for the rule and not for its autogen copies.
func TestApplyInvalidVariable(t *testing.T) {
	const policy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: typo
spec:
  rules:
  - name: check-name
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "{{ reqest.object.metadata.name }}"
      deny: {}
`
	path := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", path, "-r", testdata + "/mutate/configmap.yaml"}
	code, got, errOut := runCmd(t, args...)
	if code != 1 {
		t.Errorf("run(%q) = %d, want 1; stderr: %s", args, code, errOut)
	}
	want := "Policies Skipped:\n" +
		`1. typo: compile ClusterPolicy "typo": ` + path + `:13: spec.rules[0].validate.message: policy contains invalid variables: variable substitution failed for rule check-name: variable reqest.object.metadata.name must match regex "request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]" or patterns []` + "\n"
	if !strings.Contains(got, want) {
		t.Errorf("run(%q) stdout = %q, want it to contain %q", args, got, want)
	}
}

// TestApplyUpdateOperation: with --set request.operation=UPDATE the old
// object is the resource, re-evaluated as created (operation CREATE) for
// the Enforce rules: a rule on the operation fails, the others' violations
// are pre-existing and skipped. The output is kyverno apply's (v1.19) on
// the same files, but for its trailing space.
func TestApplyUpdateOperation(t *testing.T) {
	args := []string{"apply", "testdata/update/policy.yaml", "--resource", "testdata/update/pod.yaml", "--set", "request.operation=UPDATE"}
	code, got, errOut := runCmd(t, args...)
	if code != 1 {
		t.Errorf("run(%q) = %d, want 1; stderr: %s", args, code, errOut)
	}
	want := "\nApplying 9 policy rule(s) to 1 resource(s)...\n" +
		"policy no-update -> resource default/Pod/bad failed:\n" +
		"1 - no-update updates are not allowed\n" +
		"\npass: 0, fail: 1, warn: 0, error: 0, skip: 2 \n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run(%q) stdout mismatch (-want +got):\n%s", args, diff)
	}
}

// TestApplyPolicyMistakes: what apply prints for the policy mistakes of
// docs/cli.md, each once, with the file, the line of the field and its
// path (docs/cli.md has kyverno apply's output next to it).
func TestApplyPolicyMistakes(t *testing.T) {
	tests := []struct {
		file     string
		wantCode int
		wantOut  string // the line of "Policies Skipped:", "" for none
		wantErr  string
		// wantRules is the N of kyverno apply's "Applying N policy
		// rule(s)": the rules of a policy it skips count, autogen ones
		// included (kyverno apply v1.19.0 on the same files).
		wantRules int
	}{
		{
			file:      "badvar.yaml",
			wantCode:  1,
			wantRules: 3,
			wantOut:   `1. require-name: compile ClusterPolicy "require-name": testdata/mistakes/badvar.yaml:15: spec.rules[0].validate.message: policy contains invalid variables: variable substitution failed for rule check-name: variable reqest.object.metadata.name must match regex "request|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|image|([a-z_0-9]+\()[^{}]" or patterns []`,
		},
		{
			file:      "badjp.yaml",
			wantCode:  1,
			wantRules: 3,
			wantOut:   `1. require-name: compile ClusterPolicy "require-name": testdata/mistakes/badjp.yaml:19: spec.rules[0].validate.deny.conditions.any[0].key: variable {{ request.object.metadata.name | to_upper(@ }}: incorrect query request.object.metadata.name | to_upper(@: SyntaxError: Incomplete expression`,
		},
		{
			file:      "element.yaml",
			wantCode:  1,
			wantRules: 3,
			wantOut:   `1. element-outside: compile ClusterPolicy "element-outside": testdata/mistakes/element.yaml:13: spec.rules[0].validate.message: variable "element.name" is only defined inside a foreach`,
		},
		{
			file:     "unknownfield.yaml",
			wantCode: 1,
			wantOut:  `1. typo-field: decode ClusterPolicy "typo-field": testdata/mistakes/unknownfield.yaml:12: spec.rules[0].validat: unknown field`,
		},
		{
			file:    "nokind.yaml",
			wantErr: "warning: skipped testdata/mistakes/nokind.yaml:1: a document without kind, which is not a policy\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			args := []string{"apply", "testdata/mistakes/" + tt.file, "--resource", "testdata/mistakes/pod.yaml"}
			code, got, errOut := runCmd(t, args...)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr: %s", args, code, tt.wantCode, errOut)
			}
			var skipped []string
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "1. ") || strings.HasPrefix(l, "2. ") {
					skipped = append(skipped, l)
				}
			}
			var want []string
			if tt.wantOut != "" {
				want = []string{tt.wantOut}
			}
			if diff := cmp.Diff(want, skipped); diff != "" {
				t.Errorf("run(%q) skipped policies mismatch (-want +got):\n%s", args, diff)
			}
			if tt.wantErr != "" && !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", args, errOut, tt.wantErr)
			}
			if want := fmt.Sprintf("\nApplying %d policy rule(s) to 1 resource(s)...\n", tt.wantRules); !strings.Contains(got, want) {
				t.Errorf("run(%q) stdout = %q, want it to contain %q", args, got, want)
			}
		})
	}
}

// TestRunTestInvalidPolicy: the expected results of a policy that does
// not load are skipped, as kyverno test (v1.19) shows them on the same
// suite: "│ 1  │ require-name │ check-name │ v1/Pod/default/bad │ Skip   │
// Invalid Policy │", counted as passed.
func TestRunTestInvalidPolicy(t *testing.T) {
	code, got, errOut := runCmd(t, "test", "testdata/invalidpolicy")
	if code != 0 {
		t.Errorf("run(test testdata/invalidpolicy) = %d, want 0; stderr: %s", code, errOut)
	}
	for _, want := range []string{"│ 1  │ require-name │ check-name │ v1/Pod/default/bad │ Skip   │ Invalid Policy │\n", "\n1 passed, 0 failed\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("run(test testdata/invalidpolicy) = %q, want it to contain %q", got, want)
		}
	}
}

// countingWriter is a bytes.Buffer that counts the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
