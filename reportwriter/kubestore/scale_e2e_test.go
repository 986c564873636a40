//go:build e2e

package kubestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// scalePolicies are 17 policies named like the pod-security policies of
// kyverno/policies, with their categories and Kyverno's messages.
var scalePolicies = []string{
	"disallow-capabilities", "disallow-host-namespaces", "disallow-host-path", "disallow-host-ports",
	"disallow-host-process", "disallow-privileged-containers", "disallow-proc-mount", "disallow-selinux",
	"restrict-apparmor-profiles", "restrict-seccomp", "restrict-sysctls", "disallow-capabilities-strict",
	"disallow-privilege-escalation", "require-run-as-non-root-user", "require-run-as-nonroot",
	"restrict-seccomp-strict", "restrict-volume-types",
}

// TestScaleReports writes the background results of 5,000 Pods in 50
// namespaces against 17 single-rule policies (realistic names, messages
// and 36-character UIDs, timestamps spread over a 20 s scan) through a
// writer on the Kubernetes store of a real API server, until the report
// objects hold them, in both layouts: it logs the wall time, the API writes
// and the bytes of report objects per 1,000 Pods, and checks them against
// the targets (under 60 s, one apply per report, under 5 MB per 1,000 Pods
// with grouped results, 12 MB with the default, one result per resource).
func TestScaleReports(t *testing.T) {
	for _, tt := range []struct {
		name    string
		grouped bool
		maxMB   float64
	}{
		{"per resource", false, 12},
		{"grouped", true, 5},
	} {
		t.Run(tt.name, func(t *testing.T) { testScaleReports(t, tt.grouped, tt.maxMB) })
	}
}

func testScaleReports(t *testing.T, grouped bool, maxMB float64) {
	const pods, namespaces = 5000, 50
	policies := len(scalePolicies)
	var nss []string
	for i := range namespaces {
		nss = append(nss, fmt.Sprintf("scale-%02d", i))
	}
	dyn := startCluster(t, nss...)
	ctx := t.Context()
	s, reg := openStore(t, dyn, filepath.Join(t.TempDir(), "scale.db"), kubestore.Options{})
	w, err := reportwriter.New(reportwriter.Options{Store: s, GroupResults: grouped})
	if err != nil {
		t.Fatal(err)
	}
	var vers []*verdictv1.PolicyVersion
	var results []*verdictv1.RuleResult
	for i, name := range scalePolicies {
		vers = append(vers, &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: name, ContentHash: fmt.Sprintf("%064x", i), Background: true})
		rule := name[strings.Index(name, "-")+1:]
		category := "Pod Security Standards (Baseline)"
		if i >= 11 {
			category = "Pod Security Standards (Restricted)"
		}
		r := &verdictv1.RuleResult{Policy: name, Rule: rule, Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: verdictv1.Result_RESULT_PASS,
			Message: "validation rule '" + rule + "' passed.", Category: category, Severity: "medium", Scored: true}
		if i%5 == 0 {
			r.Result = verdictv1.Result_RESULT_FAIL
			r.Message = "validation error: Sharing the host namespaces is disallowed. The fields spec.hostNetwork, spec.hostIPC, and spec.hostPID must be unset or set to `false`. rule " + rule + " failed at path /spec/hostNetwork/"
		}
		results = append(results, r)
	}
	runtime.GC() // what the previous layout left is not this one's
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	total0 := ms0.TotalAlloc
	heap := watchHeap()
	start := time.Now()
	// The batches are in flight together, as a publisher's window keeps
	// them: each is acknowledged once its reports are applied.
	var wg sync.WaitGroup
	errs := make(chan error, pods/500+1)
	var batch []*verdictv1.PublishItem
	for i := range pods {
		batch = append(batch, &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: &verdictv1.ResourceEvaluation{
			Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: nss[i%namespaces],
				Name: fmt.Sprintf("web-7d9f8c6b5d-%05d", i), Uid: fmt.Sprintf("%08x-7d9f-4c6b-8d5e-%012x", i, i)},
			Source:   verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND,
			Time:     timestamppb.New(time.Unix(1700000000+int64(i/250), 0)),
			Policies: vers, Results: results, Complete: true,
		}}})
		if len(batch) == 500 || i == pods-1 {
			// Each batch crosses the wire: the writer gets the strings of
			// its own decoded message, as from a Publish stream, and the
			// test keeps only the encoded bytes (as a publisher would).
			wire, err := proto.Marshal(&verdictv1.PublishRequest{Items: batch})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func(wire []byte) {
				defer wg.Done()
				var req verdictv1.PublishRequest
				if err := proto.Unmarshal(wire, &req); err != nil {
					errs <- err
					return
				}
				if _, err := w.Apply(ctx, req.Items); err != nil {
					errs <- err
				}
			}(wire)
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
	peak := heap.stop()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap of the test's process (the writer, its store, the batches in flight): peak %.0f MiB, live after a GC once converged %.0f MiB, %.0f MiB allocated in all",
		float64(peak)/(1<<20), float64(ms.HeapAlloc)/(1<<20), float64(ms.TotalAlloc-total0)/(1<<20))
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w.Close(cctx)
	applies := writes(reg, "apply", "PolicyReport")

	l, err := dyn.Resource(kubestore.PolicyReports).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size, managed, nresults, entries := 0, 0, 0, 0
	for _, o := range l.Items {
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		size += len(b)
		o.SetManagedFields(nil)
		b2, _ := o.MarshalJSON()
		managed += len(b) - len(b2)
		r, e := unstructuredResults(o.Object)
		nresults += r
		entries += e
	}
	perK := float64(size) / (pods / 1000) / 1e6
	t.Logf("%d Pods x %d policies in %d namespaces: converged in %v, %d report objects, %d results listing %d entries, %v applies, %.2f MB of reports per 1,000 Pods (%d bytes an entry, %d bytes of managedFields in all)",
		pods, policies, namespaces, elapsed.Round(time.Millisecond), len(l.Items), nresults, entries, applies, perK, size/max(entries, 1), managed)
	if entries != pods*policies {
		t.Errorf("entries in the report objects = %d, want %d", entries, pods*policies)
	}
	if want := namespaces * policies; len(l.Items) != want || int(applies) != want {
		t.Errorf("report objects %d, applies %v; want %d each (one per policy and namespace)", len(l.Items), applies, want)
	}
	if elapsed > time.Minute {
		t.Errorf("converged in %v, want under 60s", elapsed)
	}
	if perK >= maxMB {
		t.Errorf("%.2f MB of report objects per 1,000 Pods, want under %v", perK, maxMB)
	}
}

// unstructuredResults counts the results of a report object and the
// entries they list (a resource of a result).
func unstructuredResults(o map[string]any) (results, entries int) {
	rs, _ := o["results"].([]any)
	for _, r := range rs {
		res, _ := r.(map[string]any)["resources"].([]any)
		entries += len(res)
	}
	return len(rs), entries
}

// heapWatch samples the bytes of live and unswept heap objects (the heap
// the collector's target is set from, and which the process's resident
// memory follows) every 20 ms, and keeps the largest.
type heapWatch struct {
	stopc chan struct{}
	peak  chan uint64
}

func watchHeap() *heapWatch {
	h := &heapWatch{stopc: make(chan struct{}), peak: make(chan uint64)}
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-tick.C:
			case <-h.stopc:
				h.peak <- peak
				return
			}
		}
	}()
	return h
}

// stop returns the peak.
func (h *heapWatch) stop() uint64 {
	close(h.stopc)
	return <-h.peak
}
