package main

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/kyvernotest"
)

func newTestCmd() *cobra.Command {
	var (
		fileName, selector, output string
		detailed, failOnly         bool
		removeColor, requireTests  bool
		forceColor                 bool
		strictPolicies             bool
		maxDocument                int
		gitBranch, kubeconfig      string
		registry                   bool
	)
	cmd := &cobra.Command{
		Use:   "test PATH...",
		Short: "Run Kyverno CLI test suites (kyverno-test.yaml)",
		Long: `Run the kyverno-test.yaml suites found under each PATH (recursively,
hidden .kyverno-test folders included) and compare each expected result
with Verdict's result, as kyverno test does.

The last line of the text and markdown output is "N passed, N failed";
-o json and -o yaml print one object with the counts and every result,
-o junit one JUnit XML document (a testsuite per policy, a testcase per
expected result and resource, a failure with the reason). The exit code
is 1 when any expected result failed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, paths []string) error {
			if err := refuseGitPaths("test", paths); err != nil {
				return err
			}
			if output == "" {
				output = kyvernotest.FormatText // kyverno test's default
			}
			if !slices.Contains(kyvernotest.Formats, output) {
				return &exitError{code: 2, msg: (&kyvernotest.FormatError{Format: output}).Error()}
			}
			opts := kyvernotest.Options{
				FileName:       fileName,
				Selector:       selector,
				StrictPolicies: strictPolicies,
				RegistryAccess: registry,
				ImageVerifier:  newImageVerifier(),

				MaxDocumentBytes: maxDocument,
				Warnings:         cmd.ErrOrStderr(),
			}
			stderr := cmd.ErrOrStderr()
			if isTerminal(stderr) {
				opts.Progress = func(done, total int) {
					fmt.Fprintf(stderr, "\r%d/%d test files", done, total)
					if done == total {
						fmt.Fprint(stderr, "\r\x1b[K")
					}
				}
			}
			rep, err := kyvernotest.Run(cmd.Context(), paths, opts)
			if err != nil {
				return err
			}
			if requireTests && len(rep.Suites) == 0 {
				return &exitError{code: 1, msg: "no tests found"}
			}
			out := cmd.OutOrStdout()
			oo := kyvernotest.OutputOptions{
				Detailed: detailed,
				FailOnly: failOnly,
				Color:    output == kyvernotest.FormatText && useColor(out, removeColor, forceColor),
			}
			// One write per outputBufferBytes, not one per line.
			bw := bufio.NewWriterSize(out, outputBufferBytes)
			if err := kyvernotest.Write(bw, output, rep, oo); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			return testExit(rep)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fileName, "file-name", "f", kyvernotest.DefaultFileName, "name of the test files to run")
	f.StringVarP(&selector, "test-case-selector", "t", "policy=*,rule=*,resource=*", "run only the expected results whose policy, rule and resource match these wildcards")
	f.StringVarP(&output, "output", "o", "text", "output format: "+strings.Join(kyvernotest.Formats, ", "))
	f.StringVar(&output, "output-format", "text", "alias of --output")
	f.BoolVar(&detailed, "detailed-results", false, "show the engine's message of each result")
	f.BoolVar(&failOnly, "fail-only", false, "show only the failed results")
	f.BoolVar(&removeColor, "remove-color", false, "never color the tables (colored only on a terminal, without NO_COLOR)")
	registerForceColor(f, &forceColor)
	f.BoolVar(&requireTests, "require-tests", false, "fail when no test file is found")
	f.BoolVar(&strictPolicies, "strict-policies", false, "fail the results of a policy that does not compile (kyverno test skips them)")
	f.IntVar(&maxDocument, "max-document-bytes", kyverno.DefaultMaxDocumentBytes, "largest YAML document of a policy or resource file, and largest test, values or user info file, in bytes")
	f.StringVarP(&gitBranch, "git-branch", "b", "", "kyverno's branch of a git URL test path; verdict clones no repository: a git URL path is refused")
	f.BoolVar(&registry, registryFlag, false, registryHelp)
	f.StringVar(&kubeconfig, "kubeconfig", "", "accepted for kyverno test's global flag; no effect (tests read no cluster, as in kyverno)")
	registerKlogFlags(f) // verdict test writes no log lines: -v changes nothing

	_ = f.MarkHidden("output-format")
	return cmd
}

// outputBufferBytes is the buffer of verdict test's output: the report is
// written when it is complete, in writes of this size.
const outputBufferBytes = 64 << 10

// testExit is the outcome of a test run: exit code 1 when a result failed.
func testExit(rep *kyvernotest.Report) error {
	if rep.Failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}
