//go:build e2e

package kubestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/timestamppb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// reportObjects lists the objects of resource gvr: "namespace/name kind" →
// the failing resources of their results.
func reportObjects(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource) map[string][]string {
	t.Helper()
	l, err := dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list %s: %v", gvr.Resource, err)
	}
	out := map[string][]string{}
	for _, o := range l.Items {
		k := o.GetNamespace() + "/" + o.GetName() + " " + o.GetAPIVersion() + " " + o.GetKind()
		out[k] = []string{}
		rs, _ := o.Object["results"].([]any)
		for _, r := range rs {
			r := r.(map[string]any)
			if r["result"] != "fail" {
				continue
			}
			for _, res := range r["resources"].([]any) {
				out[k] = append(out[k], res.(map[string]any)["name"].(string))
			}
		}
	}
	return out
}

// runWriter runs a report writer on the kubestore of path with opts,
// applies items and waits until the report objects are written.
func runWriter(t *testing.T, dyn dynamic.Interface, path string, opts kubestore.Options, items []*verdictv1.PublishItem) {
	t.Helper()
	ctx := t.Context()
	s, _ := openStore(t, dyn, path, opts)
	w, err := reportwriter.New(reportwriter.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) > 0 {
		if _, err := w.Apply(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreOpenReports runs the writer with OpenReports on a real API
// server: it writes openreports.io Report and ClusterReport objects and no
// PolicyReport or ClusterPolicyReport. A writer switched from one group to
// the other (same file) moves every entry to the new group and deletes
// its objects of the old one.
func TestStoreOpenReports(t *testing.T) {
	dyn := startCluster(t, "shop")
	policy := &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: "require-labels", ContentHash: "0123456789abcdef", Background: true}
	eval := func(kind, ns, name string, sec int64) *verdictv1.PublishItem {
		return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: &verdictv1.ResourceEvaluation{
			Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: kind, Namespace: ns, Name: name, Uid: "uid-" + name},
			Source:   verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
			Time:     timestamppb.New(time.Unix(1700000000+sec, 0)),
			Policies: []*verdictv1.PolicyVersion{policy},
			Results: []*verdictv1.RuleResult{{Policy: "require-labels", Rule: "check-team", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION,
				Result: verdictv1.Result_RESULT_FAIL, Message: "validation error: label team is required", Scored: true}},
			Complete: true,
		}}}
	}
	items := []*verdictv1.PublishItem{eval("Pod", "shop", "web", 0), eval("Pod", "shop", "api", 1), eval("Namespace", "", "shop", 2)}
	wantWG := map[string][]string{}
	wantOR := map[string][]string{
		"shop/cpol-require-labels openreports.io/v1alpha1 Report":    {"api", "web"},
		"/cpol-require-labels openreports.io/v1alpha1 ClusterReport": {"shop"},
	}
	check := func(step string, wantWG, wantOR map[string][]string) {
		t.Helper()
		got := reportObjects(t, dyn, kubestore.PolicyReports)
		for k, v := range reportObjects(t, dyn, kubestore.ClusterPolicyReports) {
			got[k] = v
		}
		if diff := cmp.Diff(wantWG, got); diff != "" {
			t.Errorf("%s: wgpolicyk8s.io objects (-want +got):\n%s", step, diff)
		}
		got = reportObjects(t, dyn, kubestore.Reports)
		for k, v := range reportObjects(t, dyn, kubestore.ClusterReports) {
			got[k] = v
		}
		if diff := cmp.Diff(wantOR, got); diff != "" {
			t.Errorf("%s: openreports.io objects (-want +got):\n%s", step, diff)
		}
	}

	t.Run("written", func(t *testing.T) {
		runWriter(t, dyn, filepath.Join(t.TempDir(), "or.db"), kubestore.Options{OpenReports: true}, items)
		check("OpenReports", wantWG, wantOR)
	})
	// The Reports of the first subtest are another writer's: remove them.
	for _, gvr := range []schema.GroupVersionResource{kubestore.Reports, kubestore.ClusterReports} {
		l, err := dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			if err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Delete(t.Context(), o.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("switched", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "switch.db")
		runWriter(t, dyn, path, kubestore.Options{}, items)
		check("wgpolicyk8s.io, before the switch", map[string][]string{
			"shop/cpol-require-labels wgpolicyk8s.io/v1alpha2 PolicyReport":    {"api", "web"},
			"/cpol-require-labels wgpolicyk8s.io/v1alpha2 ClusterPolicyReport": {"shop"},
		}, map[string][]string{})
		// The same file, now with OpenReports, and no new evaluation.
		runWriter(t, dyn, path, kubestore.Options{OpenReports: true}, nil)
		check("OpenReports, after the switch", wantWG, wantOR)
	})
}
