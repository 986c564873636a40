package kyvernotest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunValidatingPolicies runs testdata/vpol/vpol-test.yaml: a context
// file for resource.List, Namespace objects from a values file of kind
// Value, policies.kyverno.io exceptions, apiCallResponses as http mocks,
// an expected rule that is ignored, and a resource no policy responds for
// (Kyverno's "Not found").
func TestRunValidatingPolicies(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/vpol"}, Options{FileName: "vpol-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/vpol) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/vpol) suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+summarize(r))
		}
	}
	want := []string{
		"require-hpa apps/v1/Deployment/prod/with-hpa : pass -> pass ok Ok",
		"require-hpa apps/v1/Deployment/prod/without-hpa ignored: fail -> fail ok Ok",
		"require-hpa v1/Pod/prod/in-prod : pass ->  FAIL Not found",
		"prod-namespaces v1/Pod/prod/in-prod : pass -> pass ok Ok",
		"prod-namespaces v1/Pod/dev/in-dev : fail -> fail ok Ok",
		"prod-namespaces v1/Pod/dev/allowed-in-dev : pass -> pass ok Ok",
		"prod-namespaces v1/Pod/dev/exempt exception: skip -> skip ok Ok",
		"prod-namespaces apps/v1/Deployment/prod/with-hpa : pass -> pass ok Ok",
		"registry-allowed v1/Pod/prod/in-prod : pass -> pass ok Ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/vpol) mismatch (-want +got):\n%s", diff)
	}
}

// TestApplyValidatingPolicies applies testdata/vpol with --audit-warn:
// Kyverno's CLI still counts the failures of ValidatingPolicies as
// failures (under a header that calls them audit warnings). Without
// apiCallResponses, http.Get fails: 6 errors (4 Pods, and 2 Deployments
// through the policy's autogen variant).
func TestApplyValidatingPolicies(t *testing.T) {
	tests := []struct {
		name        string
		giveContext string
		want        string
	}{
		{
			name:        "with the context file",
			giveContext: "testdata/vpol/context.yaml",
			want:        "pass: 5, fail: 2, warn: 0, error: 6, skip: 1",
		},
		{
			// resource.List of a resource the CLI has no object of fails,
			// as in Kyverno's CLI.
			name: "without it",
			want: "pass: 4, fail: 1, warn: 0, error: 8, skip: 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Apply(context.Background(), ApplyOptions{
				PolicyPaths:    []string{"testdata/vpol/policies.yaml"},
				ResourcePaths:  []string{"testdata/vpol/resources.yaml"},
				ValuesFile:     "testdata/vpol/values.yaml",
				ExceptionPaths: []string{"testdata/vpol/exceptions.yaml"},
				ContextFile:    tt.giveContext,
				AuditWarn:      true,
			})
			if err != nil {
				t.Fatalf("Apply(%s) error = %v", tt.name, err)
			}
			var out bytes.Buffer
			if err := WriteApplyText(&out, res); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if got := lines[len(lines)-1]; got != tt.want {
				t.Errorf("Apply(%s) = %q, want %q\n%s", tt.name, got, tt.want, out.String())
			}
			if want := "policy prod-namespaces -> resource dev/Pod/in-dev failed as audit warning:"; !strings.Contains(out.String(), want) {
				t.Errorf("Apply(%s) output lacks %q:\n%s", tt.name, want, out.String())
			}
		})
	}
}
