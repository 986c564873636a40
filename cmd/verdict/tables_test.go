package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunTablesMatchKyverno compares the tables of apply --table and test
// with what kyverno apply and kyverno test v1.19.0 print for the same
// files (testdata/tables, recorded from Kyverno's CLI, on a terminal for
// the coloured ones; --force-color stands for the terminal): the REASON
// column (empty in apply), MESSAGE with --detailed-results, the title
// "ID (N) " of a table of more than 10 rows, and Kyverno's colours. For
// test only the table lines are compared: the lines around them differ on
// purpose (docs/cli.md).
func TestRunTablesMatchKyverno(t *testing.T) {
	const dir = "testdata/tables"
	apply := []string{"apply", dir + "/policy.yaml", "-r", dir + "/resources.yaml", "-t"}
	tests := []struct {
		name      string
		give      []string
		golden    string
		tableOnly bool
	}{
		{name: "apply", give: apply, golden: "apply-table.txt"},
		{name: "apply detailed", give: append(apply[:len(apply):len(apply)], "--detailed-results"), golden: "apply-table-detailed.txt"},
		{name: "apply color", give: append(apply[:len(apply):len(apply)], "--detailed-results", "--force-color"), golden: "apply-table-color.txt"},
		{name: "apply remove-color wins", give: append(apply[:len(apply):len(apply)], "--force-color", "--remove-color"), golden: "apply-table.txt"},
		{name: "test", give: []string{"test", dir}, golden: "test-table.txt", tableOnly: true},
		{name: "test detailed", give: []string{"test", dir, "--detailed-results"}, golden: "test-table-detailed.txt", tableOnly: true},
		{name: "test color", give: []string{"test", dir, "--detailed-results", "--force-color"}, golden: "test-table-color.txt", tableOnly: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			code, got, errOut := runCmd(t, tt.give...)
			if code != 1 {
				t.Errorf("run(%s) = %d, want 1 (a rule failed); stderr: %s", strings.Join(tt.give, " "), code, errOut)
			}
			if tt.tableOnly {
				var lines []string
				for _, l := range strings.SplitAfter(got, "\n") {
					if strings.HasPrefix(l, "│") {
						lines = append(lines, l)
					}
				}
				got = strings.Join(lines, "")
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("run(%s) mismatch with kyverno's output (-kyverno +verdict):\n%s", strings.Join(tt.give, " "), diff)
			}
		})
	}
}

func TestUseColor(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name                string
		noColor             string
		removeColor, forced bool
		want                bool
	}{
		{name: "a file is not a terminal", want: false},
		{name: "forced", forced: true, want: true},
		{name: "forced with NO_COLOR", noColor: "1", forced: true, want: true},
		{name: "remove-color wins over forced", removeColor: true, forced: true, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			if got := useColor(f, tt.removeColor, tt.forced); got != tt.want {
				t.Errorf("useColor(file, %v, %v) with NO_COLOR=%q = %v, want %v", tt.removeColor, tt.forced, tt.noColor, got, tt.want)
			}
		})
	}
}
