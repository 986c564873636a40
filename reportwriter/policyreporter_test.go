package reportwriter_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// prPolicyReport is a PolicyReport as Policy Reporter v3 decodes it
// (pkg/crd/api/policyreport/v1alpha2: PolicyReport, PolicyReportResult,
// with corev1.ObjectReference resources), reduced to the fields it shows
// per result. Policy Reporter's module is not served by the Go module
// proxy this project builds from, so its reading rule is restated here:
// GetResource returns Resources[0], nil without resources, and each result
// becomes one row of its UI, API and notifications.
type prPolicyReport struct {
	Results []prResult `json:"results"`
	Summary struct {
		Fail int `json:"fail"`
	} `json:"summary"`
}

type prResult struct {
	Policy    string `json:"policy"`
	Rule      string `json:"rule"`
	Result    string `json:"result"`
	Resources []struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		UID       string `json:"uid"`
	} `json:"resources"`
}

// resource is Policy Reporter's GetResource: the first resource of the
// result, as "kind/namespace/name", "" when it has none.
func (r prResult) resource() string {
	if len(r.Resources) == 0 {
		return ""
	}
	x := r.Resources[0]
	return x.Kind + "/" + x.Namespace + "/" + x.Name
}

// TestPolicyReporterReadsEveryResource publishes the evaluations of three
// Pods that fail one rule with the same message (and one that passes)
// through the writer, decodes the report it serves as Policy Reporter
// does, and lists the failing resources Policy Reporter shows: every one
// in the default layout (one result per resource, Kyverno's), only the
// first with GroupResults (the limitation docs/reports.md names), while
// the summary counts three failures in both.
func TestPolicyReporterReadsEveryResource(t *testing.T) {
	failing := []res{
		{"v1", "Pod", "shop", "api", "uid-api"},
		{"v1", "Pod", "shop", "cart", "uid-cart"},
		{"v1", "Pod", "shop", "web", "uid-web"},
	}
	passing := res{"v1", "Pod", "shop", "db", "uid-db"}
	const msg = "validation error: Using a mutable image tag e.g. 'latest' is not allowed. rule validate-image-tag failed at path /spec/containers/0/image/"
	tests := []struct {
		name string
		opts reportwriter.Options
		want []string
	}{
		{"default", reportwriter.Options{}, []string{"Pod/shop/api", "Pod/shop/cart", "Pod/shop/web"}},
		{"GroupResults", reportwriter.Options{GroupResults: true}, []string{"Pod/shop/api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startWriter(t, tempDB(t), "127.0.0.1:0", tt.opts)
			var batch []*verdictv1.PublishItem
			for i, r := range failing {
				batch = append(batch, evaluation(r, i, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, msg)}, []pol{polLatest}, background))
			}
			batch = append(batch, evaluation(passing, 3, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "validation rule 'validate-image-tag' passed.")}, []pol{polLatest}, background))
			sendBatches(t, e.client, batch)

			resp, err := e.client.GetReport(t.Context(), &verdictv1.GetReportRequest{Kind: reportwriter.KindPolicyReport, Namespace: "shop", Name: "cpol-disallow-latest-tag"})
			if err != nil {
				t.Fatalf("GetReport(shop/cpol-disallow-latest-tag): %v", err)
			}
			var rep prPolicyReport
			if err := json.Unmarshal(resp.GetReport(), &rep); err != nil {
				t.Fatalf("GetReport(shop/cpol-disallow-latest-tag) is not a PolicyReport: %v", err)
			}
			var shown []string
			for _, r := range rep.Results {
				if r.Result == "fail" {
					shown = append(shown, r.resource())
				}
			}
			slices.Sort(shown)
			if diff := cmp.Diff(tt.want, shown); diff != "" {
				t.Errorf("failing resources Policy Reporter shows (-want +got):\n%s", diff)
			}
			if rep.Summary.Fail != len(failing) {
				t.Errorf("summary.fail = %d, want %d", rep.Summary.Fail, len(failing))
			}
		})
	}
}
