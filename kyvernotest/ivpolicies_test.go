package kyvernotest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/internal/policyreport"
)

// TestRunImageValidatingPolicies runs testdata/ivpol/ivpol-test.yaml: an
// ImageValidatingPolicy whose tagged image fails verifyDigest before any
// registry call, whose image outside matchImageReferences passes, and a
// PolicyException that skips a Pod (a Pod its match condition excludes
// gets no result); the autogen variant for Deployments checks the pod
// template of a Deployment. The expected results are those of Kyverno v1.19's ivpol
// engine (checkDigests before loading image data; an empty image list
// verifies nothing).
func TestRunImageValidatingPolicies(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/ivpol"}, Options{FileName: "ivpol-test.yaml"})
	if err != nil {
		t.Fatalf("Run(testdata/ivpol) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/ivpol) suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+summarize(r))
		}
	}
	want := []string{
		"signed-images v1/Pod/default/tagged signed-images: fail -> fail ok Ok",
		"signed-images v1/Pod/default/elsewhere signed-images: pass -> pass ok Ok",
		"signed-images v1/Pod/default/exempt exception: skip -> skip ok Ok",
		"signed-images apps/v1/Deployment/default/tagged-deploy signed-images: fail -> fail ok Ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/ivpol) mismatch (-want +got):\n%s", diff)
	}
}

// TestApplyImageValidatingPolicies: verdict apply reports an
// ImageValidatingPolicy's results as Kyverno's CLI does (source
// KyvernoImageValidatingPolicy, rule the policy's name, process
// background scan: the policy's background evaluation is enabled).
func TestApplyImageValidatingPolicies(t *testing.T) {
	res, err := Apply(context.Background(), ApplyOptions{
		PolicyPaths:    []string{"testdata/ivpol/policies.yaml"},
		ResourcePaths:  []string{"testdata/ivpol/resources.yaml"},
		ExceptionPaths: []string{"testdata/ivpol/exceptions.yaml"},
	})
	if err != nil {
		t.Fatalf("Apply(testdata/ivpol) error = %v", err)
	}
	var found bool
	for _, rep := range res.Reports() {
		for _, r := range rep.Results {
			if r.Resources[0].Name != "tagged" {
				continue
			}
			found = true
			want := policyreport.Result{Source: "KyvernoImageValidatingPolicy", Policy: "signed-images", Rule: "signed-images", Result: "fail", Scored: true,
				Message: "image registry.example/team/app:v1 does not have a digest", Properties: map[string]string{"process": "background scan"}}
			r.Resources, r.Timestamp = nil, policyreport.Timestamp{}
			if diff := cmp.Diff(want, r); diff != "" {
				t.Errorf("Apply(testdata/ivpol) report result (-want +got):\n%s", diff)
			}
		}
	}
	if !found {
		t.Errorf("Apply(testdata/ivpol) report has no result for tagged")
	}
}

// TestApplyReportSources: verdict apply's report results carry the source
// Kyverno's CLI gives each policy kind (pkg/utils/report
// ToPolicyReportResult): testdata/mpol mixes MutatingPolicies and a
// ValidatingPolicy.
func TestApplyReportSources(t *testing.T) {
	tests := []struct {
		dir  string
		want map[string]string // policy: source; the others are not checked
	}{
		{"testdata/vpol", map[string]string{"require-hpa": "KyvernoValidatingPolicy"}},
		{"testdata/mpol", map[string]string{"team-annotation": "KyvernoMutatingPolicy", "annotated": "KyvernoValidatingPolicy"}},
		{"testdata/vap", map[string]string{"replicas-limit": "ValidatingAdmissionPolicy"}},
		{"testdata/ivpol", map[string]string{"signed-images": "KyvernoImageValidatingPolicy"}},
	}
	for _, tt := range tests {
		res, err := Apply(context.Background(), ApplyOptions{
			PolicyPaths:   []string{tt.dir + "/policies.yaml"},
			ResourcePaths: []string{tt.dir + "/resources.yaml"},
		})
		if err != nil {
			t.Fatalf("Apply(%s) error = %v", tt.dir, err)
		}
		seen := map[string]bool{}
		for _, rep := range res.Reports() {
			for _, r := range rep.Results {
				want, ok := tt.want[r.Policy]
				if !ok {
					continue
				}
				seen[r.Policy] = true
				if r.Source != want {
					t.Errorf("Apply(%s): result of %s/%s source = %q, want %q", tt.dir, r.Policy, r.Rule, r.Source, want)
				}
			}
		}
		for pol := range tt.want {
			if !seen[pol] {
				t.Errorf("Apply(%s) = no report result of %s, want some", tt.dir, pol)
			}
		}
	}
}
