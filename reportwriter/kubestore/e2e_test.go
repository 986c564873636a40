//go:build e2e

package kubestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// startCluster starts an API server with the report CRDs of deploy/crds
// (wgpolicyk8s.io and openreports.io).
func startCluster(t *testing.T, namespaces ...string) dynamic.Interface {
	t.Helper()
	cluster := e2e.Start(t, e2e.Options{})
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ax, err := apiextensions.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, f := range []string{"wgpolicyk8s.io_policyreports.yaml", "wgpolicyk8s.io_clusterpolicyreports.yaml", "openreports.io_reports.yaml", "openreports.io_clusterreports.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "deploy", "crds", f))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), &crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(kubestore.ClusterPolicyReports).List(t.Context(), metav1.ListOptions{})
		if err == nil {
			_, err = dyn.Resource(kubestore.ClusterReports).List(t.Context(), metav1.ListOptions{})
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("report CRDs not served within 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return dyn
}

// openStore opens a kubestore on a bbolt file at path.
func openStore(t *testing.T, dyn dynamic.Interface, path string, opts kubestore.Options) (*kubestore.Store, *prometheus.Registry) {
	t.Helper()
	local, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	opts.Local, opts.Client, opts.Registry = local, dyn, reg
	s, err := kubestore.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, reg
}

// report renders a stored report of n results for pods in namespace ns.
func report(ns, name string, n int, result string) *reportwriter.StoredReport {
	kind := reportwriter.KindPolicyReport
	if ns == "" {
		kind = reportwriter.KindClusterPolicyReport
	}
	var results []string
	for i := range n {
		results = append(results, fmt.Sprintf(`{"source":"kyverno","policy":"p","rule":"r","timestamp":{"seconds":1700000000,"nanos":0},"result":%q,"scored":true,"resources":[{"apiVersion":"v1","kind":"Pod","namespace":%q,"name":"pod-%04d","uid":"uid-%s-%04d"}],"message":"a message long enough to make reports grow","properties":{"process":"background scan"}}`, result, ns, i, ns, i))
	}
	body := fmt.Sprintf(`{"apiVersion":"wgpolicyk8s.io/v1alpha2","kind":%q,"metadata":{"name":%q,"namespace":%q,"labels":{"app.kubernetes.io/managed-by":"verdict","cpol.kyverno.io/p":"abc"}},"results":[%s],"summary":{"pass":0,"fail":0,"warn":0,"error":0,"skip":0}}`,
		kind, name, ns, join(results))
	return &reportwriter.StoredReport{Key: reportwriter.ReportKey{Namespace: ns, Name: name}, Policy: "p", Report: []byte(body), Created: time.Unix(1700000000, 0)}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// objects lists the report objects of ns: name → number of results.
func objects(t *testing.T, dyn dynamic.Interface, ns string) map[string]int {
	t.Helper()
	var l *unstructured.UnstructuredList
	var err error
	if ns == "" {
		l, err = dyn.Resource(kubestore.ClusterPolicyReports).List(t.Context(), metav1.ListOptions{})
	} else {
		l, err = dyn.Resource(kubestore.PolicyReports).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, o := range l.Items {
		rs, _, _ := unstructured.NestedSlice(o.Object, "results")
		out[o.GetName()] = len(rs)
	}
	return out
}

func writes(reg *prometheus.Registry, verb, kind string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "verdict_reports_api_writes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["verb"] == verb && labels["kind"] == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestStoreAgainstAPIServer writes reports through the store to a real
// API server: many Writes within the flush interval make one apply per
// report, a large report is split and shrinks back, a deleted report is
// deleted, reports of another shard are left alone, and a new store on a
// fresh file rebuilds the intermediaries from the objects.
func TestStoreAgainstAPIServer(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	// Shard 0 of 2: find a namespace of each shard.
	var own, other string
	for i := 0; own == "" || other == ""; i++ {
		ns := fmt.Sprintf("ns-%d", i)
		if reportwriter.ShardOf(ns, 2) == reportwriter.ShardOf("", 2) {
			if own == "" {
				own = ns
			}
		} else if other == "" {
			other = ns
		}
	}
	idx := reportwriter.ShardOf("", 2)
	dyn := startCluster(t, own, other)
	// The interval never elapses within the test (each step calls Flush), so
	// the 20 Writes below coalesce however slowly a loaded machine runs them.
	opts := kubestore.Options{ShardIndex: idx, ShardCount: 2, FlushInterval: time.Hour, MaxReportBytes: 16 << 10}
	s, reg := openStore(t, dyn, filepath.Join(dir, "a.db"), opts)
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}

	// 20 Writes of the same two reports within one interval: one apply each.
	for i := range 20 {
		c := &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report(own, "cpol-p", i%3+1, "pass"), report("", "cpol-p", i%2+1, "fail")}}
		if err := s.Write(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// A report of the other shard: never written.
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report(other, "cpol-p", 1, "pass")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := writes(reg, "apply", "PolicyReport") + writes(reg, "apply", "ClusterPolicyReport"); got != 2 {
		t.Errorf("applies after 20 Writes of 2 reports in one interval = %v, want 2", got)
	}
	if diff := cmp.Diff(map[string]int{"cpol-p": 2}, objects(t, dyn, own)); diff != "" {
		t.Errorf("PolicyReports of %s (-want +got):\n%s", own, diff)
	}
	if diff := cmp.Diff(map[string]int{"cpol-p": 2}, objects(t, dyn, "")); diff != "" {
		t.Errorf("ClusterPolicyReports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{}, objects(t, dyn, other)); diff != "" {
		t.Errorf("PolicyReports of the other shard's %s (-want +got):\n%s", other, diff)
	}

	// 200 results of ~400 bytes with 16 KiB objects: split into parts.
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report(own, "cpol-p", 200, "fail")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := objects(t, dyn, own)
	total := 0
	var names []string
	for n, c := range got {
		total += c
		names = append(names, n)
	}
	sort.Strings(names)
	if total != 200 || len(names) < 3 || names[0] != "cpol-p" || got["cpol-p-2"] == 0 {
		t.Errorf("split report: objects %v, want cpol-p, cpol-p-2, ... holding 200 results", got)
	}
	for _, n := range names {
		o, err := dyn.Resource(kubestore.PolicyReports).Namespace(own).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if o.GetLabels()[kubestore.LabelReport] != "cpol-p" {
			t.Errorf("%s labels %v, want %s=cpol-p", n, o.GetLabels(), kubestore.LabelReport)
		}
		b, _ := o.MarshalJSON()
		if len(b) > 16<<10+4<<10 {
			t.Errorf("%s is %d bytes, want about 16 KiB at most", n, len(b))
		}
	}
	// Shrinking removes the extra parts.
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report(own, "cpol-p", 3, "fail")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"cpol-p": 3}, objects(t, dyn, own)); diff != "" {
		t.Errorf("PolicyReports of %s after shrinking (-want +got):\n%s", own, diff)
	}

	// The same store again on the same file: consistent, nothing applied.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, reg = openStore(t, dyn, filepath.Join(dir, "a.db"), opts)
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := writes(reg, "apply", "PolicyReport"); got != 0 || len(st.Reports) != 2 {
		t.Errorf("reopened on its file: %d reports loaded, %v applies, want 2 and 0", len(st.Reports), got)
	}
	s.Close()

	// A fresh file: the intermediaries are rebuilt from the objects.
	s, _ = openStore(t, dyn, filepath.Join(dir, "b.db"), opts)
	st, err = s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]int{}
	for _, in := range st.Intermediaries {
		if in.Source != reportwriter.SourceBackground || len(in.Policies) != 1 || in.Policies[0].Hash != "abc" || !in.Policies[0].Background {
			t.Errorf("rebuilt intermediary %+v, want background, policy p with hash abc", in)
		}
		owners[in.Owner.Namespace] += len(in.Results)
	}
	if diff := cmp.Diff(map[string]int{own: 3, "": 2}, owners); diff != "" {
		t.Errorf("rebuilt results per namespace (-want +got):\n%s", diff)
	}

	// Deleting a report deletes its object.
	if err := s.Write(ctx, &reportwriter.Changes{DeleteReports: []reportwriter.ReportKey{{Namespace: own, Name: "cpol-p"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{}, objects(t, dyn, own)); diff != "" {
		t.Errorf("PolicyReports of %s after delete (-want +got):\n%s", own, diff)
	}
	s.Close()
}

// flaky fails the first fails applies with a conflict, as an API server
// does when another writer changed the object.
type flaky struct {
	dynamic.Interface
	fails *atomic.Int32
}

func (f flaky) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return flakyResource{f.Interface.Resource(gvr), f.fails}
}

type flakyResource struct {
	dynamic.NamespaceableResourceInterface
	fails *atomic.Int32
}

func (r flakyResource) Namespace(ns string) dynamic.ResourceInterface {
	return flakyNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.fails}
}

func (r flakyResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	if r.fails.Add(-1) >= 0 {
		return nil, apierrors.NewConflict(kubestore.ClusterPolicyReports.GroupResource(), name, errors.New("the object has been modified"))
	}
	return r.NamespaceableResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

type flakyNamespaced struct {
	dynamic.ResourceInterface
	fails *atomic.Int32
}

func (r flakyNamespaced) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	if r.fails.Add(-1) >= 0 {
		return nil, apierrors.NewConflict(kubestore.PolicyReports.GroupResource(), name, errors.New("the object has been modified"))
	}
	return r.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

// TestStoreConflicts makes the first applies fail with conflicts: the
// store retries with backoff and converges to the latest content, also
// when the report changed again in between.
func TestStoreConflicts(t *testing.T) {
	ctx := t.Context()
	dyn := startCluster(t, "shop")
	fails := &atomic.Int32{}
	fails.Store(3)
	s, reg := openStore(t, flaky{dyn, fails}, filepath.Join(t.TempDir(), "a.db"), kubestore.Options{
		FlushInterval: 10 * time.Millisecond, BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
	})
	defer s.Close()
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report("shop", "cpol-p", 1, "pass")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err == nil {
		t.Errorf("Flush with conflicts = nil, want the conflict")
	}
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report("shop", "cpol-p", 4, "fail")}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.Flush(ctx) != nil && time.Now().Before(deadline) {
	}
	if diff := cmp.Diff(map[string]int{"cpol-p": 4}, objects(t, dyn, "shop")); diff != "" {
		t.Errorf("PolicyReports after conflicts (-want +got):\n%s", diff)
	}
	if got := errorsTotal(reg); got != 3 {
		t.Errorf("verdict_reports_api_write_errors_total = %v, want 3", got)
	}
}

func errorsTotal(reg *prometheus.Registry) float64 {
	mfs, _ := reg.Gather()
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "verdict_reports_api_write_errors_total" {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestStoreWaitDurable checks that WaitDurable returns only once the
// reports and tombstones written before it are applied (after failed
// applies are retried), and that a store on a fresh file (a standby taking
// the shard over) loads the tombstones of the tombstone Lease.
func TestStoreWaitDurable(t *testing.T) {
	ctx := t.Context()
	dyn := startCluster(t, "shop")
	fails := &atomic.Int32{}
	fails.Store(3)
	opts := kubestore.Options{
		FlushInterval: 10 * time.Millisecond, BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
		TombstoneNamespace: "default", TombstoneName: "verdict-reports-0-of-1-tombstones",
	}
	dir := t.TempDir()
	s, reg := openStore(t, flaky{dyn, fails}, filepath.Join(dir, "a.db"), opts)
	defer s.Close()
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	deleted := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	if err := s.Write(ctx, &reportwriter.Changes{
		PutReports:    []*reportwriter.StoredReport{report("shop", "cpol-p", 4, "fail")},
		PutTombstones: map[string]time.Time{"uid-gone": deleted, "uid-old": deleted.Add(-time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.WaitDurable(wctx); err != nil {
		t.Fatalf("WaitDurable = %v, want nil", err)
	}
	// No poll: durable means applied.
	if diff := cmp.Diff(map[string]int{"cpol-p": 4}, objects(t, dyn, "shop")); diff != "" {
		t.Errorf("PolicyReports once WaitDurable returned (-want +got):\n%s", diff)
	}
	if got := errorsTotal(reg); got != 3 {
		t.Errorf("verdict_reports_api_write_errors_total = %v, want 3 (retried before WaitDurable returned)", got)
	}
	lease, err := dyn.Resource(kubestore.Leases).Namespace("default").Get(ctx, opts.TombstoneName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tombstone Lease once WaitDurable returned: %v", err)
	}
	if got, want := lease.GetAnnotations()[kubestore.AnnotationTombstones], fmt.Sprintf(`{"uid-gone":%d,"uid-old":%d}`, deleted.UnixNano(), deleted.Add(-time.Minute).UnixNano()); got != want {
		t.Errorf("tombstone annotation = %s, want %s", got, want)
	}
	if got := writes(reg, "apply", "Lease"); got < 1 {
		t.Errorf("Lease applies = %v, want counted", got)
	}

	// While applies fail, WaitDurable waits until its ctx is done.
	fails.Store(1 << 20)
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report("shop", "cpol-p", 5, "fail")}}); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if err := s.WaitDurable(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitDurable while applies fail = %v, want the context's deadline", err)
	}
	// A Write that changes no report still waits for the earlier ones.
	if err := s.Write(ctx, &reportwriter.Changes{}); err != nil {
		t.Fatal(err)
	}
	short2, cancelShort2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort2()
	if err := s.WaitDurable(short2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitDurable after an empty Write while applies fail = %v, want the context's deadline", err)
	}
	fails.Store(0)
	if err := s.WaitDurable(wctx); err != nil {
		t.Fatalf("WaitDurable once applies succeed = %v, want nil", err)
	}
	if diff := cmp.Diff(map[string]int{"cpol-p": 5}, objects(t, dyn, "shop")); diff != "" {
		t.Errorf("PolicyReports once WaitDurable returned (-want +got):\n%s", diff)
	}

	// A standby on a fresh file: the tombstones come from the Lease.
	b, _ := openStore(t, dyn, filepath.Join(dir, "b.db"), opts)
	defer b.Close()
	st, err := b.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{"uid-gone": deleted, "uid-old": deleted.Add(-time.Minute)}
	if diff := cmp.Diff(want, st.Tombstones); diff != "" {
		t.Errorf("tombstones loaded by a store on a fresh file (-want +got):\n%s", diff)
	}
	// Forgotten tombstones (TTL) leave the Lease.
	if err := b.Write(ctx, &reportwriter.Changes{DeleteTombstones: []string{"uid-old"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitDurable(wctx); err != nil {
		t.Fatal(err)
	}
	lease, err = dyn.Resource(kubestore.Leases).Namespace("default").Get(ctx, opts.TombstoneName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lease.GetAnnotations()[kubestore.AnnotationTombstones], fmt.Sprintf(`{"uid-gone":%d}`, deleted.UnixNano()); got != want {
		t.Errorf("tombstone annotation after forgetting uid-old = %s, want %s", got, want)
	}

	// Closed before its reports are applied: WaitDurable fails.
	fails.Store(1 << 20)
	if err := s.Write(ctx, &reportwriter.Changes{PutReports: []*reportwriter.StoredReport{report("shop", "cpol-q", 1, "fail")}}); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- s.WaitDurable(context.Background()) }()
	cctx, cancelClose := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelClose()
	if err := s.CloseContext(cctx); err == nil {
		t.Errorf("CloseContext while applies fail = nil, want an error")
	}
	select {
	case err := <-waitErr:
		if err == nil {
			t.Errorf("WaitDurable on a store closed with reports not applied = nil, want an error")
		}
	case <-time.After(10 * time.Second):
		t.Errorf("WaitDurable did not return when the store closed")
	}
}
