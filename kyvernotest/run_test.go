package kyvernotest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summarize renders a result as "resource rule: expected -> actual ok|FAIL
// reason" for compact comparisons.
func summarize(r Result) string {
	ok := "ok"
	if !r.OK {
		ok = "FAIL"
	}
	rule := r.ActualRule
	if rule == "" {
		rule = r.Rule
	}
	return fmt.Sprintf("%s %s: %s -> %s %s %s", r.Resource, rule, r.Expected, r.Actual, ok, r.Reason)
}

func TestRun(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata"}, Options{})
	if err != nil {
		t.Fatalf("Run(testdata) error = %v", err)
	}
	got := map[string][]string{}
	errs := map[string]string{}
	for _, s := range rep.Suites {
		dir := filepath.Base(strings.TrimSuffix(filepath.Dir(s.Path), "/.kyverno-test"))
		if s.Err != nil {
			errs[dir] = s.Err.Error()
		}
		for _, r := range s.Results {
			got[dir] = append(got[dir], summarize(r))
		}
	}
	want := map[string][]string{
		"validate": {
			"v1/Pod/default/good-pod check-team: pass -> pass ok Ok",
			"v1/Pod/shop/bad-pod check-team: fail -> fail ok Ok",
			"apps/v1/Deployment/default/good-deploy autogen-check-team: pass -> pass ok Ok",
			"v1/Service/default/web check-team: skip ->  ok Excluded",
		},
		"values": {
			"v1/Pod/prod/pod-ok check-image: pass -> pass ok Ok",
			"v1/Pod/prod/pod-bad check-image: fail -> fail ok Ok",
			"v1/Pod/dev/pod-dev check-image: skip ->  ok Excluded",
			"v1/Pod/prod/pod-update check-image: skip -> skip ok Ok",
			"v1/Pod/prod/pod-ok known-user: pass -> pass ok Ok",
			"v1/Pod/prod/pod-bad known-user: pass -> pass ok Ok",
		},
		"operation": {
			"v1/Pod/default/keep-me block-delete: fail -> fail ok Ok",
			"v1/Pod/default/scratch block-delete: pass -> pass ok Ok",
			"v1/Pod/default/keep-me block-delete: skip ->  ok Excluded",
		},
		"namespaced": {
			"v1/Pod/team-a/latest no-latest-tag: fail -> fail ok Ok",
			"v1/Pod/team-b/latest no-latest-tag: skip ->  ok Excluded",
			"v1/Pod/team-a/pinned no-latest-tag: pass -> pass ok Ok",
		},
		"mutate": {
			"v1/ConfigMap/default/settings add-owner-label: pass -> pass ok Ok",
		},
		"manifests": {
			"v1/Service/default/signed key-a: pass -> pass ok Ok",
			"v1/Service/default/tampered key-a: fail -> fail ok Ok",
			"v1/Service/default/unsigned key-a: fail -> fail ok Ok",
			"v1/Service/default/message-only key-a: fail -> fail ok Ok",
			"v1/Service/default/signed-by-b key-a: error -> error ok Ok",
			"v1/Service/default/tampered ignore-port: pass -> pass ok Ok",
			"v1/Service/default/signed-by-both count-2: pass -> pass ok Ok",
			"v1/Service/default/tampered-by-both count-2: fail -> fail ok Ok",
			"v1/Service/default/signed count-2: error -> error ok Ok",
			"v1/Service/default/signed-by-both nested: pass -> pass ok Ok",
			"v1/Service/default/signed nested: error -> error ok Ok",
		},
		"notfound": {
			"v1/Pod/default/good-pod check-team: pass ->  FAIL Not found",
		},
		"broken": {
			fmt.Sprintf("good-pod check: pass ->  FAIL %s", errs["broken"]),
		},
		"unknownfield": {
			fmt.Sprintf(" :  ->  FAIL %s", errs["unknownfield"]),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata) mismatch (-want +got):\n%s", diff)
	}
	for dir, wantErr := range map[string]string{
		"broken":       "missing.yaml: no such file or directory",
		"unknownfield": `unknown field "expectedResult"`,
	} {
		if !strings.Contains(errs[dir], wantErr) {
			t.Errorf("Run(testdata) %s error = %q, want it to contain %q", dir, errs[dir], wantErr)
		}
	}
	if rep.Passed != 28 || rep.Failed != 3 {
		t.Errorf("Run(testdata) = %d passed, %d failed, want 28 passed, 3 failed", rep.Passed, rep.Failed)
	}
}

func TestRunOptions(t *testing.T) {
	tests := []struct {
		name        string
		giveOptions Options
		wantPassed  int
		wantFailed  int
	}{
		{name: "selector on the rule", giveOptions: Options{Selector: "rule=known-*"}, wantPassed: 2},
		{name: "selector on the resource keeps the results that name it", giveOptions: Options{Selector: "policy=allowed-image,rule=check-image,resource=pod-ok"}, wantPassed: 1},
		{name: "selector on a policy", giveOptions: Options{Selector: "policy=other"}},
		{name: "other file name finds nothing", giveOptions: Options{FileName: "other.yaml"}},
		{name: "one worker", giveOptions: Options{Parallelism: 1}, wantPassed: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), []string{"testdata/values"}, tt.giveOptions)
			if err != nil {
				t.Fatalf("Run(%+v) error = %v", tt.giveOptions, err)
			}
			if rep.Passed != tt.wantPassed || rep.Failed != tt.wantFailed {
				t.Errorf("Run(%+v) = %d passed, %d failed, want %d, %d\n%v", tt.giveOptions, rep.Passed, rep.Failed, tt.wantPassed, tt.wantFailed, rep.Results())
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(context.Background(), []string{"testdata/nope"}, Options{}); err == nil {
		t.Errorf("Run(missing path) error = nil, want an error")
	}
	if _, err := Run(context.Background(), []string{"testdata"}, Options{Selector: "kind=Pod"}); err == nil {
		t.Errorf("Run(bad selector) error = nil, want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, []string{"testdata"}, Options{}); err == nil {
		t.Errorf("Run(canceled) error = nil, want the context error")
	}
}

func TestDiscover(t *testing.T) {
	got, err := Discover([]string{"testdata/validate", "testdata/mutate/kyverno-test.yaml"}, "", nil)
	if err != nil {
		t.Fatalf("Discover() error = %v", err)
	}
	want := []string{"testdata/validate/.kyverno-test/kyverno-test.yaml", "testdata/mutate/kyverno-test.yaml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Discover() mismatch, hidden folders included (-want +got):\n%s", diff)
	}
}

func TestLoaderCompilesOnce(t *testing.T) {
	l := newLoader(fileOptions{})
	a, err := l.policies([]string{"testdata/validate/require-team-label.yaml"})
	if err != nil {
		t.Fatalf("policies() error = %v", err)
	}
	b, err := l.policies([]string{"testdata/validate"})
	if err != nil {
		t.Fatalf("policies(folder) error = %v", err)
	}
	if len(a) != 1 || len(b) != 1 || a[0] != b[0] || a[0].Compiled == nil {
		t.Errorf("policies() twice = %v, %v, want the same compiled policy", a, b)
	}
}
