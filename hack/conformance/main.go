package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
	"github.com/verdict-policy/verdict/kyvernotest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// The classes of suites, by the features their policies use. A suite is in
// the first class that applies.
const (
	classVPol     = "ValidatingPolicy"
	classMPol     = "MutatingPolicy"
	classGPol     = "GeneratingPolicy"
	classNewKinds = "policies.kyverno.io and admission policies"
	classMutate   = "mutate/generate"
	classOther    = "cel/podSecurity/verifyImages/manifests"
	classValidate = "validate only"
	classUnknown  = "unloadable"
)

var classes = []string{classValidate, classOther, classMutate, classVPol, classMPol, classGPol, classNewKinds, classUnknown}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpus := fs.String("corpus", "", "corpus folder (default: ../shared/conformance/kyverno-policies from the repository root)")
	baseline := fs.String("baseline", "", "baseline file of passing result keys; compared unless -update")
	update := fs.Bool("update", false, "rewrite the baseline with the results that pass now")
	failures := fs.Bool("failures", false, "list every failed result with its reason")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *update && *baseline == "" {
		fmt.Fprintln(stderr, "-update needs -baseline")
		return 2
	}
	root := *corpus
	if root == "" {
		dir, ok := testcorpus.Corpus("")
		if !ok {
			fmt.Fprintf(stderr, "no corpus folder %q: give -corpus\n", dir)
			return 2
		}
		root = dir
	}

	start := time.Now()
	rep, err := kyvernotest.Run(ctx, []string{root}, kyvernotest.Options{StrictPolicies: true, KeepPolicies: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	elapsed := time.Since(start)

	type tally struct{ passed, total, suites int }
	byClass := map[string]*tally{}
	for _, c := range classes {
		byClass[c] = &tally{}
	}
	passing := map[string]bool{}
	var failed []string
	var all tally
	for _, s := range rep.Suites {
		c := classify(s)
		t := byClass[c]
		t.suites++
		all.suites++
		rel := relPath(root, s.Path)
		for _, r := range s.Results {
			t.total++
			all.total++
			if r.OK {
				t.passed++
				all.passed++
				passing[key(rel, r)] = true
				continue
			}
			failed = append(failed, fmt.Sprintf("%s [%s]: %s", key(rel, r), c, r.Reason))
		}
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CLASS\tPASSED\tTOTAL\tSHARE\tSUITES\t")
	row := func(name string, t *tally) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t\n", name, t.passed, t.total, share(t.passed, t.total), t.suites)
	}
	for _, c := range classes {
		if byClass[c].suites > 0 {
			row(c, byClass[c])
		}
	}
	row("overall", &all)
	tw.Flush()
	fmt.Fprintf(stdout, "\n%d test files in %s\n", len(rep.Suites), elapsed.Round(time.Millisecond))

	if *failures {
		fmt.Fprintln(stdout, "\nFailed results:")
		for _, f := range failed {
			fmt.Fprintln(stdout, "  "+f)
		}
	}

	keys := make([]string, 0, len(passing))
	for k := range passing {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	regressions := 0
	switch {
	case *update:
		if err := writeBaseline(*baseline, keys); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stdout, "baseline %s updated: %d passing results\n", *baseline, len(keys))
	case *baseline != "":
		base, err := readBaseline(*baseline)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		var lost []string
		for _, k := range base {
			if !passing[k] {
				lost = append(lost, k)
			}
		}
		inBase := make(map[string]bool, len(base))
		for _, k := range base {
			inBase[k] = true
		}
		improved := 0
		for _, k := range keys {
			if !inBase[k] {
				improved++
			}
		}
		if len(lost) > 0 {
			fmt.Fprintf(stdout, "\n%d regressions (in the baseline, not passing now):\n", len(lost))
			for _, k := range lost {
				fmt.Fprintln(stdout, "  "+k)
			}
		}
		if improved > 0 {
			fmt.Fprintf(stdout, "\n%d results pass that are not in the baseline: improved, run with -update\n", improved)
		}
		regressions = len(lost)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", all.passed, regressions)
	if regressions > 0 {
		return 1
	}
	return 0
}

// key is the baseline key of a result.
func key(rel string, r kyvernotest.Result) string {
	return strings.Join([]string{rel, r.Policy, r.Rule, r.Resource, r.Expected}, "|")
}

func share(passed, total int) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(passed)/float64(total))
}

func relPath(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// classify puts a suite in the class of the most demanding feature its
// policies use.
func classify(s kyvernotest.SuiteResult) string {
	if len(s.Policies) == 0 {
		return classUnknown
	}
	newKinds, mutate, other, vpols, mpols, gpols := false, false, false, false, false, false
	for _, p := range s.Policies {
		switch p.Kind {
		case "ValidatingPolicy", "NamespacedValidatingPolicy":
			vpols = true
			continue
		case "MutatingPolicy", "NamespacedMutatingPolicy":
			mpols = true
			continue
		case "GeneratingPolicy", "NamespacedGeneratingPolicy":
			gpols = true
			continue
		}
		if p.Kind != "ClusterPolicy" && p.Kind != "Policy" {
			newKinds = true
			continue
		}
		spec, _ := p.Raw["spec"].(map[string]any)
		rules, _ := spec["rules"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			if rule["mutate"] != nil || rule["generate"] != nil {
				mutate = true
			}
			if rule["verifyImages"] != nil {
				other = true
			}
			if v, ok := rule["validate"].(map[string]any); ok {
				for _, k := range []string{"cel", "podSecurity", "manifests", "assert"} {
					if v[k] != nil {
						other = true
					}
				}
			}
		}
	}
	switch {
	case newKinds:
		return classNewKinds
	case gpols:
		return classGPol
	case mpols:
		return classMPol
	case vpols:
		return classVPol
	case mutate:
		return classMutate
	case other:
		return classOther
	}
	return classValidate
}

func readBaseline(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	return out, nil
}

func writeBaseline(path string, keys []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	return nil
}
