//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// mainEnv makes the test binary run verdict itself (TestMain), so that
// the e2e tests start real verdict processes they can kill.
const mainEnv = "VERDICT_E2E_RUN_VERDICT"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startVerdictProcess runs verdict with args in a process of its own;
// kill ends it with SIGKILL (no shutdown at all) and waits. It is stopped
// with SIGTERM when the test ends; its output is printed when the test
// failed.
func startVerdictProcess(t *testing.T, name string, args []string) (kill func()) {
	t.Helper()
	t.Logf("verdict %v (process)", args)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var once sync.Once
	kill = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
		})
	}
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("%s did not stop on SIGTERM", name)
				kill()
			}
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, out.String())
		}
	})
	return kill
}

// podEvaluation is the admission of Pod ns/name (UID uid) at time at,
// with the result of the one rule of policy failover-check.
func podEvaluation(ns, name, uid string, at time.Time, result verdictv1.Result) publish.Evaluation {
	return publish.Evaluation{
		Time:      at,
		Resource:  publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name, UID: uid},
		Operation: "CREATE",
		Complete:  true,
		Response: &verdictv1.EvaluateResponse{
			Allowed:  true,
			Results:  []*verdictv1.RuleResult{{Policy: "failover-check", Rule: "check", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: result, Message: "checked", Scored: true}},
			Policies: []*verdictv1.PolicyVersion{{Kind: "ClusterPolicy", Name: "failover-check", ContentHash: "h1", Background: true}},
		},
	}
}

// items are the publish items of evs.
func items(evs ...publish.Evaluation) []*verdictv1.PublishItem {
	out := make([]*verdictv1.PublishItem, 0, len(evs))
	for _, ev := range evs {
		out = append(out, publish.Item(ev))
	}
	return out
}

// reportEntries reads every PolicyReport written by Verdict: namespace/Pod
// → result, and how many times each appears over all objects and parts.
func (cr *clusterReports) reportEntries(t *testing.T) (map[string]string, map[string]int) {
	t.Helper()
	l, err := cr.dyn.Resource(kubestore.PolicyReports).List(t.Context(), metav1.ListOptions{LabelSelector: reportwriter.LabelManagedBy + "=" + reportwriter.ManagedBy})
	if err != nil {
		t.Fatal(err)
	}
	got, count := map[string]string{}, map[string]int{}
	for _, o := range l.Items {
		rs, _, _ := unstructured.NestedSlice(o.Object, "results")
		for _, r := range rs {
			m := r.(map[string]any)
			for _, res := range m["resources"].([]any) {
				k := fmt.Sprint(res.(map[string]any)["namespace"], "/", res.(map[string]any)["name"])
				got[k] = fmt.Sprint(m["result"])
				count[k]++
			}
		}
	}
	return got, count
}

// TestE2EReportsFailoverKill runs two verdict reports serve processes of
// one shard (separate bbolt files, the shard's Lease) on a real API
// server, with a publisher streaming admissions through a forwarder to the
// leader; the leader is killed with SIGKILL in the middle of the stream.
// The publisher fails over to the standby; once every item is
// acknowledged, every result is in its report exactly once (nothing
// acknowledged by the dead leader is lost), and a resource deleted before
// the kill does not come back after a late resend of an older evaluation.
func TestE2EReportsFailoverKill(t *testing.T) {
	cr := newClusterReports(t)
	ctx := t.Context()
	namespaces := []string{"team-a", "team-b", "team-c", "team-d"}
	for _, ns := range namespaces {
		if _, err := cr.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const flush = time.Second
	kills := map[string]func(){}
	for i, id := range []string{"replica-a", "replica-b"} {
		w := &writerProc{addr: freeAddr(t), metrics: freeAddr(t)}
		kills[id] = startVerdictProcess(t, "reports-"+id, []string{"reports", "serve",
			"--listen=" + w.addr, "--metrics-listen=" + w.metrics,
			"--store=" + filepath.Join(cr.dir, id+".db"), "--kubeconfig=" + cr.kubeconfig,
			"--shard=0/1", "--lease-namespace=verdict", "--identity=" + id,
			"--flush-interval=" + flush.String(),
			"--lease-duration=3s", "--renew-deadline=2s", "--retry-period=250ms", "--log-level=debug",
		})
		cr.writers = append(cr.writers, w)
		if i == 0 {
			poll(t, 30*time.Second, "replica-a leads", func() error { return serving(w.addr) })
		}
	}
	cr.writerAddr = forwardToReady(t, cr.writers)
	conn, err := grpc.NewClient(cr.writerAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := prometheus.NewRegistry()
	p, err := publish.New(conn, publish.Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 500 * time.Millisecond, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	flushCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	want := map[string]string{}
	now := time.Now()
	evals := func(from, to int) []*verdictv1.PublishItem {
		var evs []publish.Evaluation
		for i := from; i < to; i++ {
			ns, name := namespaces[i%len(namespaces)], fmt.Sprintf("pod-%05d", i)
			result, s := verdictv1.Result_RESULT_PASS, "pass"
			if i%3 == 0 {
				result, s = verdictv1.Result_RESULT_FAIL, "fail"
			}
			want[ns+"/"+name] = s
			evs = append(evs, podEvaluation(ns, name, fmt.Sprintf("uid-%05d", i), now, result))
		}
		return items(evs...)
	}

	// Before the kill: 4,000 admissions, and a Pod admitted then deleted.
	const first = 4000
	doomed := podEvaluation("team-a", "doomed", "uid-doomed", now.Add(-2*time.Second), verdictv1.Result_RESULT_FAIL)
	deleted := doomed
	deleted.Operation, deleted.Time = "DELETE", now.Add(-time.Second)
	start := time.Now()
	if err := p.Publish(ctx, append(evals(0, first), items(doomed, deleted)...)...); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(flushCtx); err != nil {
		t.Fatalf("Flush before the kill: %v", err)
	}
	t.Logf("%d admissions acknowledged by the leader in %v (acknowledged once applied to the API server)", first+2, time.Since(start).Round(time.Millisecond))

	// A stream of 12,000 more, 300 every 100ms; the leader is killed once
	// 2,000 of them are acknowledged.
	const more, step = 12000, 300
	streamed := make(chan error, 1)
	go func() {
		for i := first; i < first+more; i += step {
			if err := p.Publish(ctx, evals(i, i+step)...); err != nil {
				streamed <- err
				return
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				streamed <- ctx.Err()
				return
			}
		}
		streamed <- nil
	}()
	poll(t, time.Minute, "2,000 streamed admissions acknowledged", func() error {
		if got := metric(t, reg, "verdict_report_publisher_items_acknowledged_total"); got < first+2+2000 {
			return errf("%v acknowledged", got)
		}
		return nil
	})
	ackedAtKill := metric(t, reg, "verdict_report_publisher_items_acknowledged_total")
	kills["replica-a"]()
	killed := time.Now()
	t.Logf("replica-a killed (SIGKILL) with %v items acknowledged", ackedAtKill)
	poll(t, 30*time.Second, "replica-b leads", func() error { return serving(cr.writers[1].addr) })
	t.Logf("replica-b serving %v after the kill", time.Since(killed).Round(time.Millisecond))
	if err := <-streamed; err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := p.Flush(flushCtx); err != nil {
		t.Fatalf("Flush after the failover: %v", err)
	}
	t.Logf("every item acknowledged %v after the kill", time.Since(killed).Round(time.Millisecond))
	if got := metric(t, reg, "verdict_report_publisher_reconnects_total"); got < 1 {
		t.Errorf("publisher reconnects = %v, want at least 1 (it failed over)", got)
	}

	// Acknowledged means applied: no poll.
	got, count := cr.reportEntries(t)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report entries after the failover (-want +got):\n%s", diff)
	}
	for k, n := range count {
		if n != 1 {
			t.Errorf("%s appears %d times in the reports, want once", k, n)
		}
	}

	// A late resend of the deleted Pod's older evaluation, to the new
	// leader: refused (the tombstone came over in the tombstone Lease).
	dups := metric(t, reg, "verdict_report_publisher_items_duplicate_total")
	if err := p.Publish(ctx, items(doomed)...); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(flushCtx); err != nil {
		t.Fatalf("Flush of the late resend: %v", err)
	}
	if got := metric(t, reg, "verdict_report_publisher_items_duplicate_total") - dups; got != 1 {
		t.Errorf("duplicates after the late resend of a deleted Pod = %v, want 1 (refused)", got)
	}
	got, _ = cr.reportEntries(t)
	if r, ok := got["team-a/doomed"]; ok {
		t.Errorf("deleted Pod team-a/doomed is back in the reports (%s) after a late resend", r)
	}
	if n := scrape(t, cr.writers[1], "verdict_reports_ack_seconds_count"); n > 0 {
		t.Logf("replica-b: %v batches acknowledged, %.2fs from arrival to acknowledgement on average",
			n, scrape(t, cr.writers[1], "verdict_reports_ack_seconds_sum")/n)
	}
}

// metric returns the value of the counter name of reg (0 when absent).
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}
