//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/deploy"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
)

// secretsPolicy is guides/reports.md's first walkthrough.
const secretsPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: secrets-not-from-env-vars
spec:
  background: true
  rules:
    - name: secrets-not-from-env-vars
      match:
        any:
          - resources:
              kinds:
                - Pod
      validate:
        failureAction: Audit
        message: 'Secrets must be mounted as volumes, not as environment variables.'
        pattern:
          spec:
            containers:
              - name: '*'
                =(env):
                  - =(valueFrom):
                      X(secretKeyRef): 'null'
`

// nsLabelsPolicy is the require-ns-labels ClusterPolicy of
// guides/reports.md's report internals.
const nsLabelsPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-ns-labels
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: check-for-labels-on-namespace
    match:
      any:
      - resources:
          kinds:
          - Namespace
    validate:
      message: "The label ` + "`thisshouldntexist`" + ` is required."
      pattern:
        metadata:
          labels:
            thisshouldntexist: "?*"
`

// clusterReports is a real API server with a decision server, the webhook
// proxy registered on it, and two report writers of one shard on the
// Kubernetes store (a leader and a standby), reached through a forwarder
// that, like the Service of a shard, sends connections to the ready one.
type clusterReports struct {
	*devCluster
	serverAddr string
	writerAddr string // the forwarder
	writers    []*writerProc
	// openReports: the writers write openreports.io reports
	// (--openreports-enabled), which apiReport reads.
	openReports bool
}

type writerProc struct {
	addr, metrics string
	stop          func()
}

// newClusterReports starts a real API server with the CRDs and Namespaces
// of overlays/dev, and no Verdict process yet.
func newClusterReports(t *testing.T) *clusterReports {
	t.Helper()
	dc := startDevCluster(t)
	ctx := context.Background()
	cs, dyn := dc.cs, dc.dyn
	// No controller manager: the default ServiceAccount Pods need.
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "the report CRDs served", func() error {
		_, err := dyn.Resource(kubestore.ClusterPolicyReports).List(ctx, metav1.ListOptions{})
		return err
	})
	return &clusterReports{devCluster: dc}
}

func startClusterReports(t *testing.T, flushInterval time.Duration, policies ...string) *clusterReports {
	t.Helper()
	return startClusterReportsWith(t, flushInterval, nil, policies...)
}

// startClusterReportsWith is startClusterReports with writerArgs added to
// the flags of the report writers.
func startClusterReportsWith(t *testing.T, flushInterval time.Duration, writerArgs []string, policies ...string) *clusterReports {
	t.Helper()
	cr := newClusterReports(t)
	cr.openReports = slices.Contains(writerArgs, "--openreports-enabled")
	cs, kubeconfig, overlay, dir, objs := cr.cs, cr.kubeconfig, cr.overlay, cr.dir, cr.objs
	cr.applyPolicies(t, policies...)

	for i, id := range []string{"replica-a", "replica-b"} {
		w := &writerProc{addr: freeAddr(t), metrics: freeAddr(t)}
		w.stop = startStoppable(t, "reports-"+id, append([]string{"reports", "serve",
			"--listen=" + w.addr, "--metrics-listen=" + w.metrics,
			"--store=" + filepath.Join(dir, id+".db"), "--kubeconfig=" + kubeconfig,
			"--shard=0/1", "--lease-namespace=verdict", "--identity=" + id,
			"--flush-interval=" + flushInterval.String(),
			"--lease-duration=3s", "--renew-deadline=2s", "--retry-period=250ms", "--log-level=debug",
		}, writerArgs...))
		cr.writers = append(cr.writers, w)
		if i == 0 {
			// The first one leads; the second one stands by.
			poll(t, 30*time.Second, "replica-a leads", func() error { return serving(w.addr) })
		}
	}
	cr.writerAddr = forwardToReady(t, cr.writers)

	serverAddr, proxyAddr := freeAddr(t), freeAddr(t)
	certFile, keyFile, ca := writeLoopbackCert(t, dir)
	args := func(component string, set map[string]string) []string {
		a, err := deploy.Args(overlay, component, nil)
		if err != nil {
			t.Fatal(err)
		}
		return deploy.LocalArgs(a, kubeconfig, set)
	}
	startProcess(t, "server", args("server", map[string]string{
		"listen": serverAddr, "metrics-listen": "", "report-writer": cr.writerAddr,
	}))
	startProcess(t, "webhook", args("webhook", map[string]string{
		"server": serverAddr, "listen": proxyAddr, "metrics-listen": "", "tls-cert": certFile, "tls-key": keyFile,
	}))
	cr.serverAddr = serverAddr
	c, err := client.Dial(serverAddr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	waitPoliciesReady(t, c, len(policies))
	registerValidatingWebhooks(t, cs, objs, proxyAddr, ca)
	return cr
}

// startStoppable runs verdict with args in this process; stop ends it
// (as SIGTERM does) and waits.
func startStoppable(t *testing.T, name string, args []string) func() {
	t.Helper()
	t.Logf("verdict %s", strings.Join(args, " "))
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, out, out) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(40 * time.Second):
				t.Errorf("%s did not stop", name)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, out.String())
		}
	})
	return stop
}

// serving checks the gRPC health of addr: nil when SERVING.
func serving(addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errf("%s: %v", addr, resp.GetStatus())
	}
	return nil
}

// forwardToReady listens on a loopback address and forwards each
// connection to the writer that reports SERVING (the leader), as a
// Service does with the ready endpoints.
func forwardToReady(t *testing.T, ws []*writerProc) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var ready atomic.Value
	ready.Store("")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			cur := ""
			for _, w := range ws {
				if serving(w.addr) == nil {
					cur = w.addr
					break
				}
			}
			ready.Store(cur)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			to := ready.Load().(string)
			if to == "" {
				c.Close()
				continue
			}
			b, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(b, c); b.Close() }()
			go func() { io.Copy(c, b); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// apiReport reads a report object from the API server (an openreports.io
// one with cr.openReports): resource
// kind/name → result, the summary, and the messages.
func (cr *clusterReports) apiReport(ns, name string) (map[string]string, map[string]int64, []string, error) {
	var o *unstructured.Unstructured
	var err error
	namespaced, cluster := kubestore.PolicyReports, kubestore.ClusterPolicyReports
	if cr.openReports {
		namespaced, cluster = kubestore.Reports, kubestore.ClusterReports
	}
	if ns == "" {
		o, err = cr.dyn.Resource(cluster).Get(context.Background(), name, metav1.GetOptions{})
	} else {
		o, err = cr.dyn.Resource(namespaced).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	got := map[string]string{}
	var msgs []string
	rs, _, _ := unstructured.NestedSlice(o.Object, "results")
	for _, r := range rs {
		m := r.(map[string]any)
		for _, res := range m["resources"].([]any) {
			res := res.(map[string]any)
			key := fmt.Sprint(res["kind"], "/", res["name"])
			if _, dup := got[key]; dup {
				return nil, nil, nil, errf("%s lists %s twice", name, key)
			}
			got[key] = fmt.Sprint(m["result"])
			msgs = append(msgs, fmt.Sprint(m["message"]))
		}
	}
	sum, _, _ := unstructured.NestedMap(o.Object, "summary")
	counts := map[string]int64{}
	for k, v := range sum {
		counts[k], _ = v.(int64)
	}
	return got, counts, msgs, nil
}

// pollAPIReport waits until the report object holds want and summary.
func (cr *clusterReports) pollAPIReport(t *testing.T, ns, name string, want map[string]string, summary map[string]int64) []string {
	t.Helper()
	var msgs []string
	poll(t, 60*time.Second, "report "+ns+"/"+name, func() error {
		got, sum, m, err := cr.apiReport(ns, name)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return errf("results (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(summary, sum); diff != "" {
			return errf("summary (-want +got):\n%s", diff)
		}
		msgs = m
		return nil
	})
	return msgs
}

// apiWrites scrapes verdict_reports_api_writes_total{verb,kind} of a writer.
func apiWrites(t *testing.T, w *writerProc, verb, kind string) int {
	t.Helper()
	return int(scrape(t, w, fmt.Sprintf(`verdict_reports_api_writes_total{kind=%q,verb=%q}`, kind, verb)))
}

// scrape returns the value of one series (name and labels, as exposed)
// of a writer's metrics, 0 when absent.
func scrape(t *testing.T, w *writerProc, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + w.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

func summary(pass, fail int64) map[string]int64 {
	return map[string]int64{"pass": pass, "fail": fail, "warn": 0, "error": 0, "skip": 0}
}

func pod(name string, secretEnv bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "busybox", Image: "busybox:1.28", Args: []string{"sleep", "9999"}}}},
	}
	if secretEnv {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SECRET_STUFF", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "mysecret"}, Key: "mysecretname"}}}}
	}
	return p
}

// TestE2EReportsWalkthroughs runs the two walkthroughs of
// guides/reports.md against a real API server, with the decision server,
// the webhook proxy, the scanner and the report writer on the Kubernetes
// store, reading the reports back as objects; then counts the API writes
// of a burst of admissions, and stops the leading writer: the standby
// takes the Lease and the reports stay exact.
func TestE2EReportsWalkthroughs(t *testing.T) {
	const flush = 3 * time.Second
	cr := startClusterReports(t, flush, secretsPolicy, nsLabelsPolicy)
	ctx := t.Context()
	pods := cr.cs.CoreV1().Pods("default")
	const secretsReport = "cpol-secrets-not-from-env-vars"

	// Walkthrough 1: a pass entry, a fail entry for secret-pod, then gone.
	if _, err := pods.Create(ctx, pod("busybox", false), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Pod busybox: %v", err)
	}
	cr.pollAPIReport(t, "default", secretsReport, map[string]string{"Pod/busybox": "pass"}, summary(1, 0))
	if _, err := pods.Create(ctx, pod("secret-pod", true), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Pod secret-pod: %v, want allowed (Audit)", err)
	}
	msgs := cr.pollAPIReport(t, "default", secretsReport, map[string]string{"Pod/busybox": "pass", "Pod/secret-pod": "fail"}, summary(1, 1))
	wantMsg := "validation error: Secrets must be mounted as volumes, not as environment variables. rule secrets-not-from-env-vars failed at path /spec/containers/0/env/0/valueFrom/secretKeyRef/"
	if !strings.Contains(strings.Join(msgs, "\n"), wantMsg) {
		t.Errorf("messages of %s = %q, want one %q", secretsReport, msgs, wantMsg)
	}
	if err := pods.Delete(ctx, "secret-pod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cr.pollAPIReport(t, "default", secretsReport, map[string]string{"Pod/busybox": "pass"}, summary(1, 0))

	// Walkthrough 2: require-ns-labels, a fail per Namespace from the
	// background scan, then one more from the admission of a new one.
	for shard := 0; shard < 2; shard++ {
		args, err := deploy.Args(cr.overlay, "scanner", map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(shard)})
		if err != nil {
			t.Fatal(err)
		}
		args = deploy.LocalArgs(args, cr.kubeconfig, map[string]string{"server": cr.serverAddr, "report-writer": cr.writerAddr})
		var out, errOut bytes.Buffer
		if code := run(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("verdict %s = exit %d, want 0\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	nsList, err := cr.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantNS := map[string]string{}
	for _, ns := range nsList.Items {
		wantNS["Namespace/"+ns.Name] = "fail"
	}
	cr.pollAPIReport(t, "", "cpol-require-ns-labels", wantNS, summary(0, int64(len(wantNS))))
	if _, err := cr.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testing"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Namespace testing: %v, want allowed (Audit)", err)
	}
	wantNS["Namespace/testing"] = "fail"
	cr.pollAPIReport(t, "", "cpol-require-ns-labels", wantNS, summary(0, int64(len(wantNS))))

	// A burst of admissions within one flush interval: one apply.
	leader := cr.writers[0]
	before := apiWrites(t, leader, "apply", "PolicyReport")
	const burst = 10
	want := map[string]string{"Pod/busybox": "pass"}
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for i := range burst {
		name := fmt.Sprintf("burst-%02d", i)
		want["Pod/"+name] = "pass"
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := pods.Create(ctx, pod(name, false), metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create Pod: %v", err)
	}
	if d := time.Since(start); d > flush/2 {
		t.Logf("the burst took %v, more than half the flush interval %v: it may make two applies", d, flush)
	}
	cr.pollAPIReport(t, "default", secretsReport, want, summary(burst+1, 0))
	if got := apiWrites(t, leader, "apply", "PolicyReport") - before; got != 1 {
		t.Errorf("PolicyReport applies for %d admissions within one flush interval = %d, want 1", burst, got)
	}

	// Leader change: the leader stops, the standby takes the Lease and
	// goes on from the objects; an admission made meanwhile is not lost.
	leader.stop()
	if err := pods.Delete(ctx, "burst-00", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	delete(want, "Pod/burst-00")
	if _, err := pods.Create(ctx, pod("after-change", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want["Pod/after-change"] = "fail"
	standby := cr.writers[1]
	poll(t, 30*time.Second, "replica-b leads", func() error { return serving(standby.addr) })
	cr.pollAPIReport(t, "default", secretsReport, want, summary(burst, 1))
	cr.pollAPIReport(t, "", "cpol-require-ns-labels", wantNS, summary(0, int64(len(wantNS))))
	lease, err := cr.cs.CoordinationV1().Leases("verdict").Get(ctx, "verdict-reports-0-of-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := *lease.Spec.HolderIdentity; got != "replica-b" {
		t.Errorf("Lease holder = %q, want replica-b", got)
	}
	// Only final reports in etcd, and only Verdict's.
	all, err := cr.dyn.Resource(kubestore.PolicyReports).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range all.Items {
		names = append(names, o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"default/" + secretsReport}, names); diff != "" {
		t.Errorf("PolicyReports (-want +got):\n%s", diff)
	}
}

// TestE2EReportsOpenReports runs the report writers with
// --openreports-enabled behind the processes of overlays/dev: an
// admission that an Audit policy fails, and one it passes, are in the
// openreports.io Report of the policy, and no PolicyReport or
// ClusterPolicyReport is written.
func TestE2EReportsOpenReports(t *testing.T) {
	cr := startClusterReportsWith(t, time.Second, []string{"--openreports-enabled"}, secretsPolicy)
	ctx := t.Context()
	pods := cr.cs.CoreV1().Pods("default")
	for _, p := range []*corev1.Pod{pod("busybox", false), pod("secret-pod", true)} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Pod %s: %v, want allowed (Audit)", p.Name, err)
		}
	}
	cr.pollAPIReport(t, "default", "cpol-secrets-not-from-env-vars", map[string]string{"Pod/busybox": "pass", "Pod/secret-pod": "fail"}, summary(1, 1))
	o, err := cr.dyn.Resource(kubestore.Reports).Namespace("default").Get(ctx, "cpol-secrets-not-from-env-vars", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.GetAPIVersion() != "openreports.io/v1alpha1" || o.GetKind() != "Report" {
		t.Errorf("report object = %s %s, want openreports.io/v1alpha1 Report", o.GetAPIVersion(), o.GetKind())
	}
	for _, gvr := range []schema.GroupVersionResource{kubestore.PolicyReports, kubestore.ClusterPolicyReports} {
		l, err := cr.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 0 {
			t.Errorf("%s: %d objects, want none with --openreports-enabled", gvr.Resource, len(l.Items))
		}
	}
	if got := apiWrites(t, cr.writers[0], "apply", "PolicyReport"); got != 0 {
		t.Errorf("PolicyReport applies = %d, want 0", got)
	}
	if got := apiWrites(t, cr.writers[0], "apply", "Report"); got == 0 {
		t.Errorf("Report applies = 0, want at least 1")
	}
}
