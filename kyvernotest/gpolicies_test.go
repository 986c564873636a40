package kyvernotest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunGeneratingAndDeletingPolicies runs testdata/gpol and
// testdata/dpol. gpol: a GeneratingPolicy copying the Secrets of the
// test's clusterResources (resource.List) into a Namespace its match
// condition selects, and one writing a ConfigMap from a template; the
// Namespace the first one's match condition leaves out has no response,
// which kyverno test reports as not found. dpol: a DeletingPolicy whose
// conditions read the object and namespaceObject (the values'
// namespaceSelector): pass for the Pod it would delete, fail for the
// others. The expected outcomes are those of Kyverno v1.19's CLI
// (commands/test output.go, applyDeletingPolicies).
func TestRunGeneratingAndDeletingPolicies(t *testing.T) {
	tests := []struct {
		dir, file string
		want      []string
	}{{
		dir: "testdata/gpol", file: "gpol-test.yaml",
		want: []string{
			"copy-secrets v1/Namespace/web copy-secrets: pass -> pass ok Ok",
			"copy-secrets v1/Namespace/batch : pass ->  FAIL Not found",
			"team-config v1/Namespace/web team-config: pass -> pass ok Ok",
			"team-config v1/Namespace/batch team-config: pass -> pass ok Ok",
		},
	}, {
		dir: "testdata/dpol", file: "dpol-test.yaml",
		want: []string{
			"expired-pods v1/Pod/qa/old expired-pods: pass -> pass ok Ok",
			"expired-pods v1/Pod/qa/fresh expired-pods: fail -> fail ok Ok",
			"expired-pods v1/Pod/prod/old expired-pods: fail -> fail ok Ok",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			rep, err := Run(context.Background(), []string{tt.dir}, Options{FileName: tt.file})
			if err != nil {
				t.Fatalf("Run(%s) error = %v", tt.dir, err)
			}
			var got []string
			for _, s := range rep.Suites {
				if s.Err != nil {
					t.Fatalf("Run(%s) suite error = %v", tt.dir, s.Err)
				}
				for _, r := range s.Results {
					got = append(got, r.Policy+" "+summarize(r))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run(%s) mismatch (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
}
