package kyvernotest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunMutatingPolicies runs testdata/mpol/mpol-test.yaml: a
// MutatingPolicy whose match condition reads a variable (pass, skip), a
// second one chained after it, whose JSON patches the first policy's
// patchedResources include (Kyverno's CLI compares the resource after
// every MutatingPolicy), and a ValidatingPolicy that sees the mutations.
// The expected results are those Kyverno v1.19's CLI passes.
func TestRunMutatingPolicies(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/mpol"}, Options{FileName: "mpol-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/mpol) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/mpol) suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+summarize(r))
		}
	}
	want := []string{
		"team-annotation v1/Pod/shop/blue : pass -> pass ok Ok",
		"team-annotation v1/Pod/shop/nobody : skip -> skip ok Ok",
		"pull-always v1/Pod/shop/blue : pass -> pass ok Ok",
		"pull-always v1/Pod/shop/nobody : pass -> pass ok Ok",
		"annotated v1/Pod/shop/blue : pass -> pass ok Ok",
		"annotated v1/Pod/shop/nobody : fail -> fail ok Ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/mpol) mismatch (-want +got):\n%s", diff)
	}
}

// TestRunMutatingPolicyPatchedMismatch checks that a patched resource
// that differs from the expected manifest fails the result with the
// difference, whatever the status.
func TestRunMutatingPolicyPatchedMismatch(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"policies.yaml", "resources.yaml", "patched-blue.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/mpol", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The expected manifest of blue lacks the annotation of
	// team-annotation, which runs before pull-always.
	test := `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: mismatch}
policies: [policies.yaml]
resources: [resources.yaml]
results:
- {policy: pull-always, kind: Pod, resources: [blue], patchedResources: patched.yaml, result: pass}
`
	patched := strings.Replace(mustRead(t, filepath.Join(dir, "patched-blue.yaml")), "  annotations: {team: blue}\n", "", 1)
	if err := os.WriteFile(filepath.Join(dir, "patched.yaml"), []byte(patched), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kyverno-test.yaml"), []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatalf("Run(mismatch) error = %v", err)
	}
	rs := rep.Results()
	if len(rs) != 1 || rs[0].OK || rs[0].Reason != "Resource diff" || !strings.Contains(rs[0].Message, `"path":"/metadata/annotations"`) {
		t.Errorf("Run(mismatch) = %+v, want one result failed by a resource diff on /metadata/annotations", rs)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestApplyMutatingPolicies applies testdata/mpol: the resource after each
// MutatingPolicy is printed, a skip is reported as Kyverno's CLI reports
// it, and its results are counted twice, as Kyverno's CLI counts them.
func TestApplyMutatingPolicies(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/mpol/policies.yaml"},
		ResourcePaths: []string{"testdata/mpol/resources.yaml"},
	})
	if err != nil {
		t.Fatalf("Apply(testdata/mpol) error = %v", err)
	}
	var out bytes.Buffer
	if err := WriteMutated(&out, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteApplyText(&out, res); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"policy team-annotation applied to shop/Pod/blue:",
		"policy pull-always applied to shop/Pod/nobody:",
		"imagePullPolicy: Always",
		"skipped mutate policy team-annotation -> resource shop/Pod/nobody",
		"pass: 7, fail: 1, warn: 0, error: 0, skip: 2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Apply(testdata/mpol) output lacks %q:\n%s", want, text)
		}
	}
}

// TestRunMutateExistingTargets checks the targets of a MutatingPolicy
// with mutateExisting as kyverno test checks them: the ConfigMap its
// targetMatchConstraints select is patched and compared with
// patchedResources; an expected result that names a target no policy
// patched (the Secret) fails as Kyverno's CLI fails it ("Not found").
func TestRunMutateExistingTargets(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/mpol/existing"}, Options{FileName: "existing-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/mpol/existing) error = %v", err)
	}
	var got []string
	for _, r := range rep.Results() {
		got = append(got, r.Policy+" "+summarize(r))
	}
	want := []string{
		"label-configmaps v1/ConfigMap/shop/settings : pass -> pass ok Ok",
		"label-configmaps shop/creds : pass ->  FAIL Not found",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/mpol/existing) mismatch (-want +got):\n%s", diff)
	}
}

// TestApplyMutateExistingCounts applies testdata/mpol/existing with its
// target: the patched target is printed, and only the trigger's result is
// counted (twice, as Kyverno's CLI counts a MutatingPolicy's), not the
// target's, which Kyverno's CLI leaves out of its counts.
func TestApplyMutateExistingCounts(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:   []string{"testdata/mpol/existing/policy.yaml"},
		ResourcePaths: []string{"testdata/mpol/existing/trigger.yaml"},
		TargetPaths:   []string{"testdata/mpol/existing/target.yaml"},
	})
	if err != nil {
		t.Fatalf("Apply(testdata/mpol/existing) error = %v", err)
	}
	var out bytes.Buffer
	if err := WriteMutated(&out, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteApplyText(&out, res); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"patched targets:", "mutated: \"true\"", "pass: 2, fail: 0, warn: 0, error: 0, skip: 0"} {
		if !strings.Contains(text, want) {
			t.Errorf("Apply(testdata/mpol/existing) output lacks %q:\n%s", want, text)
		}
	}
}

// TestRunMutatingPoliciesCRD runs testdata/mpolcrd/mpolcrd-test.yaml: the
// ApplyConfigurations of MutatingPolicies on a custom resource merge with
// the schema of the CRD that clusterResources names (its list-map merged
// by key, its preserve-unknown-fields object merged, its atomic list
// refused), and without the CRD fail as Kyverno's CLI fails ("type
// converter must not be nil"). Kyverno v1.19.0's CLI gives the same
// results.
func TestRunMutatingPoliciesCRD(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/mpolcrd"}, Options{FileName: "mpolcrd-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/mpolcrd) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/mpolcrd) suite %s error = %v", s.Name, s.Err)
		}
		for _, r := range s.Results {
			got = append(got, s.Name+" "+r.Policy+" "+summarize(r)+" "+r.Message)
		}
	}
	want := []string{
		"mpol-crd add-part test.verdict.io/v1/Gadget/default/g1 : pass -> pass ok Ok success",
		"mpol-crd set-tags test.verdict.io/v1/Gadget/default/g1 evaluation: error -> error ok Ok failed to evaluate policy: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.tags",
		"mpol-no-crd add-part test.verdict.io/v1/Gadget/default/g1 evaluation: error -> error ok Ok failed to evaluate policy: error applying patch: type converter must not be nil",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/mpolcrd) mismatch (-want +got):\n%s", diff)
	}
}
