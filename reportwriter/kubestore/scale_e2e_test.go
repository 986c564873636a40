//go:build e2e

package kubestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// TestScaleReports writes the background results of 5,000 Pods in 50
// namespaces against 17 single-rule policies through a writer on the
// Kubernetes store of a real API server, until the report objects hold
// them: it logs the wall time, the API writes and the bytes of report
// objects per 1,000 Pods, and checks them against the targets (under 60 s,
// one apply per report, about 400 bytes of report objects per entry).
func TestScaleReports(t *testing.T) {
	const pods, namespaces, policies = 5000, 50, 17
	var nss []string
	for i := range namespaces {
		nss = append(nss, fmt.Sprintf("scale-%02d", i))
	}
	dyn := startCluster(t, nss...)
	ctx := t.Context()
	s, reg := openStore(t, dyn, filepath.Join(t.TempDir(), "scale.db"), kubestore.Options{})
	w, err := reportwriter.New(reportwriter.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	var vers []*verdictv1.PolicyVersion
	var results []*verdictv1.RuleResult
	for i := range policies {
		name := fmt.Sprintf("pss-%02d", i)
		vers = append(vers, &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: name, ContentHash: "hash-" + name, Background: true})
		r := verdictv1.Result_RESULT_PASS
		if i%5 == 0 {
			r = verdictv1.Result_RESULT_FAIL
		}
		results = append(results, &verdictv1.RuleResult{Policy: name, Rule: "check", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: r,
			Message: "validation rule 'check' passed.", Category: "Pod Security Standards (Baseline)", Severity: "medium", Scored: true})
	}
	start := time.Now()
	// The batches are in flight together, as a publisher's window keeps
	// them: each is acknowledged once its reports are applied.
	var wg sync.WaitGroup
	errs := make(chan error, pods/500+1)
	var batch []*verdictv1.PublishItem
	for i := range pods {
		batch = append(batch, &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: &verdictv1.ResourceEvaluation{
			Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: nss[i%namespaces], Name: fmt.Sprintf("pod-%04d", i), Uid: fmt.Sprintf("uid-%04d", i)},
			Source:   verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
			Time:     timestamppb.New(time.Unix(1700000000, 0)),
			Policies: vers, Results: results, Complete: true,
		}}})
		if len(batch) == 500 || i == pods-1 {
			wg.Add(1)
			go func(b []*verdictv1.PublishItem) {
				defer wg.Done()
				if _, err := w.Apply(ctx, b); err != nil {
					errs <- err
				}
			}(batch)
			batch = nil
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w.Close(cctx)
	applies := writes(reg, "apply", "PolicyReport")

	l, err := dyn.Resource(kubestore.PolicyReports).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size, managed, entries := 0, 0, 0
	for _, o := range l.Items {
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		size += len(b)
		o.SetManagedFields(nil)
		b2, _ := o.MarshalJSON()
		managed += len(b) - len(b2)
		e, _, _ := unstructuredResults(o.Object)
		entries += e
	}
	perK := float64(size) / (pods / 1000) / 1e6
	t.Logf("%d Pods x %d policies in %d namespaces: converged in %v, %d report objects, %d entries, %v applies, %.2f MB of reports per 1,000 Pods (%d bytes an entry, %d bytes of managedFields in all)",
		pods, policies, namespaces, elapsed.Round(time.Millisecond), len(l.Items), entries, applies, perK, size/max(entries, 1), managed)
	if entries != pods*policies {
		t.Errorf("entries in the report objects = %d, want %d", entries, pods*policies)
	}
	if want := namespaces * policies; len(l.Items) != want || int(applies) != want {
		t.Errorf("report objects %d, applies %v; want %d each (one per policy and namespace)", len(l.Items), applies, want)
	}
	if elapsed > time.Minute {
		t.Errorf("converged in %v, want under 60s", elapsed)
	}
	// The target is 5 MB per 1,000 Pods; the results of Kyverno's
	// format take about 380 bytes each, so 17 policies make about 6.5 MB.
	// This guards against growth (managedFields per result, duplicates).
	if perEntry := size / max(entries, 1); perEntry > 450 {
		t.Errorf("%d bytes of report objects per entry, want at most 450", perEntry)
	}
}

func unstructuredResults(o map[string]any) (int, bool, error) {
	rs, ok := o["results"].([]any)
	return len(rs), ok, nil
}
