//go:build e2e

package scanner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
	"github.com/verdict-policy/verdict/scanner"
)

// prodOwnerPolicy asks for an owner label on the ConfigMaps of namespaces
// labelled env=prod.
const prodOwnerPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: prod-owner
spec:
  rules:
  - name: check-owner
    match:
      any:
      - resources:
          kinds: [ConfigMap]
          namespaceSelector:
            matchLabels:
              env: prod
    validate:
      message: "The label owner is required in prod."
      pattern:
        metadata:
          labels:
            owner: "?*"
`

// outcome is what the sink got for a resource: its results by policy
// ("deleted" for a deletion), in order.
func (s *collectSink) outcomes(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.results {
		if r.Resource.Name != name {
			continue
		}
		if r.Deleted {
			out = append(out, "deleted")
			continue
		}
		var parts []string
		for _, rr := range r.Response.GetResults() {
			parts = append(parts, rr.GetPolicy()+"="+strings.ToLower(strings.TrimPrefix(rr.GetResult().String(), "RESULT_")))
		}
		out = append(out, strings.Join(parts, ","))
	}
	return out
}

func (s *collectSink) scanDones() []scanner.ScanDone {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]scanner.ScanDone(nil), s.done...)
}

// last is the latest outcome of name, "" when none.
func (s *collectSink) last(name string) string {
	o := s.outcomes(name)
	if len(o) == 0 {
		return ""
	}
	return o[len(o)-1]
}

// pollFor waits until f returns nil.
func pollFor(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestE2EWatch runs a watching scanner of one shard against a real API
// server: ConfigMaps created, changed, changed in metadata only, in a
// namespace whose labels change, and deleted, a ConfigMap of the other
// shard, then a policy changed on the server; and stops it.
func TestE2EWatch(t *testing.T) {
	_, cs, dyn, cached := startCluster(t)
	ctx := context.Background()
	// The shard of ns-a, and a namespace of the other shard.
	shard := scanner.Shard{Index: scanner.ShardOf("ns-a", 2), Count: 2}
	other := ""
	for i := 0; other == ""; i++ {
		if ns := fmt.Sprintf("ns-o%d", i); !shard.Owns(ns) {
			other = ns
		}
	}
	for _, ns := range []string{"ns-a", other} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cms := cs.CoreV1().ConfigMaps("ns-a")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "good", Labels: map[string]string{"team": "web"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ts := startServer(t, teamConfigMapPolicy, prodOwnerPolicy)
	cl, err := scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: cached})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	reg := prometheus.NewRegistry()
	s, err := scanner.New(ts.client, scanner.Options{Shard: shard, Sink: sink, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	rounds := make(chan scanner.Summary, 100)
	go func() {
		done <- s.Watch(wctx, cl, scanner.WatchOptions{
			Delay: 100 * time.Millisecond, PolicyPoll: 200 * time.Millisecond,
			Round: func(sum scanner.Summary, err error) {
				if err != nil {
					t.Errorf("watch round: %v", err)
				}
				rounds <- sum
			},
		})
	}()
	expect := func(name, want string) {
		t.Helper()
		pollFor(t, name+" "+want, func() error {
			if got := sink.last(name); got != want {
				return fmt.Errorf("latest outcome of %s = %q (all: %q)", name, got, sink.outcomes(name))
			}
			return nil
		})
	}

	// The first scan, from the watch's cache, ends with a ScanDone.
	expect("good", "configmap-team=pass")
	pollFor(t, "the first ScanDone", func() error {
		if d := sink.scanDones(); len(d) != 1 || len(d[0].Policies) != 0 || d[0].Shard != shard {
			return fmt.Errorf("ScanDones = %+v, want one full scan of shard %s", d, shard)
		}
		return nil
	})

	// Created, then changed.
	bad, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expect("bad", "configmap-team=fail")
	bad.Labels = map[string]string{"team": "api"}
	if bad, err = cms.Update(ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("bad", "configmap-team=pass")

	// Metadata no policy looks at (a finalizer): not evaluated.
	skipped := func() float64 {
		return counterValue(t, reg, "verdict_scan_watch_events_total", map[string]string{"type": "update", "action": "skipped"})
	}
	before, evaluated := skipped(), len(sink.outcomes("bad"))
	bad.Finalizers = []string{"example.com/hold"}
	if bad, err = cms.Update(ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "the finalizer update skipped", func() error {
		if n := skipped(); n <= before {
			return fmt.Errorf("skipped updates = %v, want more than %v", n, before)
		}
		return nil
	})
	if _, err := cms.Patch(ctx, "bad", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// The other shard's ConfigMap is never evaluated: its event comes
	// before that of "late" on the same watch.
	if _, err := cs.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("late", "configmap-team=fail")
	if got := sink.outcomes("elsewhere"); len(got) != 0 {
		t.Errorf("ConfigMap %s/elsewhere of the other shard evaluated: %q", other, got)
	}
	if got := sink.outcomes("bad"); len(got) != evaluated {
		t.Errorf("outcomes of bad after metadata-only updates = %q, want the %d before them", got, evaluated)
	}

	// The namespace gets env=prod: its ConfigMaps are evaluated again,
	// and prod-owner now applies.
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, "ns-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"env":"prod"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("good", "configmap-team=pass,prod-owner=fail")
	expect("late", "configmap-team=fail,prod-owner=fail")

	// Deleted: a deletion, after the evaluations.
	if err := cms.Delete(ctx, "late", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("late", "deleted")

	// A changed policy is rescanned alone.
	ts.source.updates <- documents(t, strings.Replace(teamConfigMapPolicy, "The label team is required.", "A team label, please.", 1), prodOwnerPolicy)
	pollFor(t, "the policy rescan", func() error {
		for _, d := range sink.scanDones() {
			if len(d.Policies) == 1 && d.Policies[0] == "configmap-team" {
				return nil
			}
		}
		return fmt.Errorf("no ScanDone of configmap-team: %+v", sink.scanDones())
	})
	expect("bad", "configmap-team=pass")

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Watch() after stop = %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Watch did not return within 20s of its context ending")
	}
	close(rounds)
	n := 0
	for sum := range rounds {
		n += sum.Resources + sum.Deleted
	}
	if n == 0 {
		t.Error("no round reported")
	}
	if got := counterValue(t, reg, "verdict_scan_watch_deleted_total", nil); got != 1 {
		t.Errorf("verdict_scan_watch_deleted_total = %v, want 1", got)
	}
}

// TestE2EWatchLimits checks the limits of a watch on a real API server:
// rounds of at most MaxBatch changes, and SyncTimeout for a kind the
// scanner may not list.
func TestE2EWatchLimits(t *testing.T) {
	cluster := e2e.Start(t, e2e.Options{})
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, teamConfigMapPolicy)
	cluster0 := func(cfg *rest.Config) *scanner.Cluster {
		t.Helper()
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: memory.NewMemCacheClient(disc)})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}

	t.Run("max batch", func(t *testing.T) {
		sink := &collectSink{}
		s, err := scanner.New(ts.client, scanner.Options{Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		rounds := make(chan scanner.Summary, 100)
		done := make(chan error, 1)
		go func() {
			done <- s.Watch(wctx, cluster0(cluster.Config), scanner.WatchOptions{
				Delay: 500 * time.Millisecond, MaxBatch: 2,
				Round: func(sum scanner.Summary, _ error) { rounds <- sum },
			})
		}()
		pollFor(t, "the first scan", func() error {
			if len(sink.scanDones()) == 0 {
				return fmt.Errorf("no ScanDone yet")
			}
			return nil
		})
		for i := range 5 {
			if _, err := cs.CoreV1().ConfigMaps("ns-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for n < 5 {
			select {
			case sum := <-rounds:
				if sum.Resources > 2 {
					t.Errorf("a round evaluated %d resources, want at most MaxBatch 2", sum.Resources)
				}
				n += sum.Resources
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of 5 ConfigMaps evaluated after 30s", n)
			}
		}
		stop()
		if err := <-done; err != nil {
			t.Errorf("Watch() = %v, want nil", err)
		}
	})

	t.Run("sync timeout", func(t *testing.T) {
		// A user without any role: the namespaces cannot be listed.
		cfg := rest.CopyConfig(cluster.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
		s, err := scanner.New(ts.client, scanner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = s.Watch(ctx, cluster0(cfg), scanner.WatchOptions{SyncTimeout: time.Second})
		if err == nil || !strings.Contains(err.Error(), "watch namespaces: not listed within 1s") {
			t.Errorf("Watch() as a user who may not list namespaces = %v, want the sync timeout", err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("Watch() returned after %v, want about SyncTimeout (1s)", d)
		}
	})
}
