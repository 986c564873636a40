//go:build e2e

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/deploy"
)

// TestE2EChartProcesses starts the report writer, the decision server, the
// webhook proxy and one scan shard with the flags of the Helm chart's
// default values (helm template with the binary of $VERDICT_HELM;
// --in-cluster becomes --kubeconfig, addresses move to loopback), on a
// real API server: the writer runs as the chart runs it, writing
// PolicyReport objects, so a Pod that violates an Audit policy shows in
// the cluster's PolicyReport after its admission, and one that existed
// before the policy after the scan.
func TestE2EChartProcesses(t *testing.T) {
	helm := os.Getenv(deploy.HelmEnv)
	if helm == "" {
		t.Skipf("$%s is not set (make e2e builds helm and sets it)", deploy.HelmEnv)
	}
	cr := newClusterReports(t)
	ctx := t.Context()
	objs, err := deploy.RenderChart(ctx, helm, filepath.Join("..", "..", "deploy", deploy.ChartDir), deploy.Namespace, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := func(component string, env, set map[string]string) []string {
		a, err := deploy.ComponentArgs(objs, component, env)
		if err != nil {
			t.Fatal(err)
		}
		return deploy.LocalArgs(a, cr.kubeconfig, set)
	}
	pods := cr.cs.CoreV1().Pods("default")
	// Before the policy: only the scan reports it.
	if _, err := pods.Create(ctx, pod("old-secret-pod", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cr.applyPolicies(t, secretsPolicy)

	w := &writerProc{addr: freeAddr(t), metrics: freeAddr(t)}
	// Outside a cluster the Lease's namespace defaults to "default"; the
	// chart's pod is in the release namespace.
	startProcess(t, "reports", args("reports", nil, map[string]string{
		"listen": w.addr, "metrics-listen": w.metrics, "store": filepath.Join(cr.dir, "reports.db"), "lease-namespace": deploy.Namespace,
	}))
	poll(t, 30*time.Second, "the writer leads its shard", func() error { return serving(w.addr) })
	cr.writers, cr.writerAddr = []*writerProc{w}, w.addr
	cr.serverAddr = freeAddr(t)
	proxyAddr := freeAddr(t)
	certFile, keyFile, ca := writeLoopbackCert(t, cr.dir)
	startProcess(t, "server", args("server", nil, map[string]string{
		"listen": cr.serverAddr, "metrics-listen": "", "report-writer": cr.writerAddr,
	}))
	startProcess(t, "webhook", args("webhook", nil, map[string]string{
		"server": cr.serverAddr, "listen": proxyAddr, "metrics-listen": "", "tls-cert": certFile, "tls-key": keyFile,
	}))
	c, err := client.Dial(cr.serverAddr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	waitPoliciesReady(t, c, 1)
	registerValidatingWebhooks(t, cr.cs, objs, proxyAddr, ca)

	const report = "cpol-secrets-not-from-env-vars"
	poll(t, 30*time.Second, "an Audit violation is admitted", func() error {
		_, err := pods.Create(ctx, pod("secret-pod", true), metav1.CreateOptions{})
		return err
	})
	cr.pollAPIReport(t, "default", report, map[string]string{"Pod/secret-pod": "fail"}, summary(0, 1))

	// The scan of every shard of the chart's CronJob, as its pods run it.
	shards := 0
	for _, wl := range mustWorkloads(t, objs) {
		if wl.Component == "scanner" {
			shards = int(wl.Completions)
		}
	}
	if shards == 0 {
		t.Fatal("the chart has no scanner with completions")
	}
	for i := range shards {
		a := args("scanner", map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i)}, map[string]string{"server": cr.serverAddr, "report-writer": cr.writerAddr})
		if code := run(ctx, a, &syncBuffer{}, &syncBuffer{}); code != 0 {
			t.Fatalf("verdict %q = exit %d, want 0", a, code)
		}
	}
	cr.pollAPIReport(t, "default", report, map[string]string{"Pod/secret-pod": "fail", "Pod/old-secret-pod": "fail"}, summary(0, 2))
}

func mustWorkloads(t *testing.T, objs []*unstructured.Unstructured) []deploy.Workload {
	t.Helper()
	ws, err := deploy.Workloads(objs)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
