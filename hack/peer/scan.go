package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vclient "github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// The background scan scenario: Pods in scanNamespaces namespaces, then
// the ClusterPolicies, then the scanning system, on a fresh apiserver +
// etcd per system; the clock runs from the system's first process start
// until the final reports hold every Pod's entries with nothing
// intermediary pending, as seen by two checks at least scanSettle apart
// that agree (the time is the first one's).
const (
	scanNamespaces = 50
	scanPoll       = time.Second     // etcd counts of reports and intermediaries
	scanBytesEvery = 5               // polls between two reads of the intermediaries' bytes
	scanSettle     = 2 * time.Second // least time between the two checks that agree
	podCreators    = 16              // Pod creates in flight while populating
)

// Prefixes of etcd keys: the final reports (wgpolicyk8s.io) and Kyverno's
// intermediary ones (reports.kyverno.io: EphemeralReports and
// ClusterEphemeralReports).
const (
	etcdReports      = "/registry/wgpolicyk8s.io/"
	etcdIntermediary = "/registry/reports.kyverno.io/"
)

// scanResult is one system's background scan.
type scanResult struct {
	system      string
	pods        int
	converged   time.Duration // from the first process start; 0: not converged
	failure     string        // why it did not converge
	cpu         float64
	peakRSS     int64
	writes      map[string]float64 // API write requests by "VERB group/resource"
	reports     int                // final report objects in etcd
	repBytes    int
	inter       int // intermediary objects in etcd at the end
	interBytes  int
	peakInter   int           // most intermediary objects seen (every poll)
	peakInterB  int           // most bytes of them seen (every scanBytesEvery polls)
	firstInter  time.Duration // since start, when an intermediary was first seen
	peakInterAt time.Duration
	load1       string
	cpCPU       float64                   // CPU seconds of etcd and kube-apiserver from the system's start to convergence
	entries     map[string]map[string]int // policy -> result -> count
	total       int                       // entries
	covered     int                       // Pods with at least one entry
	notes       []string                  // printed under the table
}

// scanSystem is a scanning system once started: its processes, and
// whether it has nothing pending (besides what etcd shows).
type scanSystem struct {
	procs []*proc
	idle  func() (bool, string)
	// timeline: what happened when, for the notes
	timeline func(start time.Time) string
	// final: more notes, read before the processes stop
	final func() []string
}

// scanScenario runs the background scan of o.scanPods Pods for each
// system o.only selects, each on its own fresh cluster.
func scanScenario(ctx context.Context, r *runner, o options) []*scanResult {
	var out []*scanResult
	if o.runs("verdict") {
		out = append(out, scanOne(ctx, r, o, "Verdict", func(cr *runner, kubeconfig string) *scanSystem {
			return startVerdictScan(ctx, cr, o, kubeconfig)
		}))
		if o.verdictGrouped {
			out = append(out, scanOne(ctx, r, o, "Verdict --group-results", func(cr *runner, kubeconfig string) *scanSystem {
				return startVerdictScan(ctx, cr, o, kubeconfig, "--group-results")
			}))
		}
	}
	if o.runs("kyverno") {
		if _, err := os.Stat(o.kyvernoReportsBin); err != nil {
			r.Logf("Kyverno's reports controller: %v; no Kyverno scan (build cmd/reports-controller of github.com/kyverno/kyverno@v1.19.0 there)", err)
		} else {
			out = append(out, scanOne(ctx, r, o, "Kyverno", func(cr *runner, kubeconfig string) *scanSystem {
				return startKyvernoReports(cr, o, kubeconfig)
			}))
		}
	}
	return out
}

func scanOne(ctx context.Context, r *runner, o options, name string, startSystem func(*runner, string) *scanSystem) *scanResult {
	cr := r.child()
	defer cr.close()
	r.Logf("scan, %s: starting a fresh etcd and kube-apiserver", name)
	// Privileged Pods are allowed, for some to fail the restricted profile.
	cl := e2e.Start(cr, e2e.Options{APIServerArgs: []string{"--allow-privileged=true"}})
	kubeconfig := filepath.Join(cr.dir, "kubeconfig")
	if err := writeKubeconfig(cl, kubeconfig); err != nil {
		r.Fatalf("kubeconfig: %v", err)
	}
	nss := []string{"kyverno"}
	for i := range scanNamespaces {
		nss = append(nss, fmt.Sprintf("scale-%02d", i))
	}
	if _, err := install(ctx, cl.Config, o.crds, "", nss); err != nil {
		r.Fatalf("install: %v", err)
	}
	cfg := rest.CopyConfig(cl.Config)
	cfg.QPS, cfg.Burst = -1, 0
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		r.Fatalf("%v", err)
	}
	t0 := time.Now()
	if err := createPods(ctx, kc, nss[1:], o.scanPods); err != nil {
		r.Fatalf("scan, %s: %v", name, err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		r.Fatalf("%v", err)
	}
	n, err := installPolicies(ctx, dc, o.policies)
	if err != nil {
		r.Fatalf("install: %v", err)
	}
	r.Logf("scan, %s: %d Pods in %d namespaces created in %v, %d ClusterPolicies", name, o.scanPods, scanNamespaces, time.Since(t0).Round(time.Millisecond), n)

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		r.Fatalf("%v", err)
	}
	cp := controlPlane(cl.Dir)
	cp0 := cp.cpu()
	writes0, err := apiWrites(hc, cl.URL)
	if err != nil {
		r.Fatalf("apiserver metrics: %v", err)
	}
	res := &scanResult{system: name, pods: o.scanPods}
	start := time.Now()
	sys := startSystem(cr, kubeconfig)
	res.converged, res.cpu, res.failure = waitConverged(r, o, cl.EtcdURL, sys, start, res)
	res.cpCPU = cp.cpu() - cp0
	res.load1 = strings.Fields(loadAvg())[0]
	if res.failure == "" {
		// What a later sample would add is the system's idle work: the
		// CPU is the one at the convergence check.
		r.Logf("scan, %s: converged in %v, %.1f CPU s", name, res.converged.Round(time.Millisecond), res.cpu)
	} else {
		res.cpu, _ = scanCPU(sys.procs)
		r.Logf("scan, %s: not converged: %s", name, res.failure)
	}
	res.peakRSS = scanPeakRSS(sys.procs)
	var each []string
	for _, p := range sys.procs {
		c, _ := scanCPU([]*proc{p})
		each = append(each, fmt.Sprintf("%s %.1f CPU s, peak RSS %.0f MiB", p.name, c, float64(scanPeakRSS([]*proc{p}))/(1<<20)))
	}
	res.notes = append(res.notes, "at the end: "+strings.Join(each, "; "))
	if sys.timeline != nil {
		res.notes = append(res.notes, sys.timeline(start))
	}
	if res.peakInter > 0 {
		res.notes = append(res.notes, fmt.Sprintf("first intermediary report in etcd at %.1f s, most (%d) at %.1f s", res.firstInter.Seconds(), res.peakInter, res.peakInterAt.Seconds()))
	}
	if w1, err := apiWrites(hc, cl.URL); err == nil {
		res.writes = map[string]float64{}
		for k, v := range w1 {
			if d := v - writes0[k]; d > 0 {
				res.writes[k] = d
			}
		}
	}
	// The end state.
	if kvs, err := etcdRange(cl.EtcdURL, etcdReports, false); err == nil {
		res.reports, res.repBytes = len(kvs), kvBytes(kvs)
		res.entries, res.total, res.covered = countEntries(kvs)
	}
	if kvs, err := etcdRange(cl.EtcdURL, etcdIntermediary, false); err == nil {
		res.inter, res.interBytes = len(kvs), kvBytes(kvs)
	}
	if sys.final != nil {
		res.notes = append(res.notes, sys.final()...)
	}
	for _, p := range sys.procs {
		p.stop()
	}
	return res
}

// createPods creates n Pods over the namespaces, podCreators at once.
func createPods(ctx context.Context, kc kubernetes.Interface, nss []string, n int) error {
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range podCreators {
		wg.Go(func() {
			for i := range next {
				if _, err := kc.CoreV1().Pods(nss[i%len(nss)]).Create(ctx, scalePod(i), metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("create pod %d: %w", i, err):
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// scalePod is the Pod of Verdict's scale test (TestE2EScanScale): two
// containers, every tenth privileged, every seventh on the host network,
// so that the reports hold failures too.
func scalePod(i int) *corev1.Pod {
	c := corev1.Container{
		Name: "app", Image: "registry.example.com/app:1.2." + strconv.Itoa(i%10),
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	if i%10 == 0 {
		privileged := true
		c.SecurityContext = &corev1.SecurityContext{Privileged: &privileged}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Labels: map[string]string{"app": "scale", "shard": strconv.Itoa(i % 7)}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c, {Name: "sidecar", Image: "registry.example.com/proxy:2.0"}}},
	}
	if i%7 == 0 {
		p.Spec.HostNetwork = true
	}
	return p
}

// waitConverged polls etcd until the reports hold an entry of every Pod,
// no intermediary report is left and the system has nothing pending,
// twice at least scanSettle apart with the same entries; it returns the
// time of the first of those checks since start and the CPU seconds then.
func waitConverged(r *runner, o options, etcdURL string, sys *scanSystem, start time.Time, res *scanResult) (time.Duration, float64, string) {
	deadline := start.Add(o.scanTimeout)
	type check struct {
		at    time.Duration
		cpu   float64
		total int
	}
	var cand *check
	last := ""
	for polls := 0; ; polls++ {
		time.Sleep(scanPoll)
		for _, p := range sys.procs {
			if p.exited() && !p.oneShot {
				return 0, 0, fmt.Sprintf("%s exited:\n%s", p.name, tailLog(p.log, 20))
			}
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Sprintf("not converged after %v (last: %s)", o.scanTimeout, last)
		}
		at := time.Since(start)
		cpu, err := scanCPU(sys.procs)
		if err != nil {
			continue
		}
		inter, err := etcdCount(etcdURL, etcdIntermediary)
		if err != nil {
			last = err.Error()
			continue
		}
		if inter > 0 && res.firstInter == 0 {
			res.firstInter = at
		}
		if inter > res.peakInter {
			res.peakInter, res.peakInterAt = inter, at
		}
		if inter > 0 && polls%scanBytesEvery == 0 {
			if kvs, err := etcdRange(etcdURL, etcdIntermediary, false); err == nil {
				res.peakInterB = max(res.peakInterB, kvBytes(kvs))
			}
		}
		reports, err := etcdCount(etcdURL, etcdReports)
		if err != nil {
			last = err.Error()
			continue
		}
		idle, why := sys.idle()
		last = fmt.Sprintf("%d reports, %d intermediary, %s", reports, inter, why)
		if inter > 0 || !idle || reports == 0 {
			cand = nil
			continue
		}
		kvs, err := etcdRange(etcdURL, etcdReports, false)
		if err != nil {
			last = err.Error()
			continue
		}
		_, total, covered := countEntries(kvs)
		last = fmt.Sprintf("%d reports, %d entries, %d of %d Pods covered", reports, total, covered, o.scanPods)
		if covered < o.scanPods {
			cand = nil
			continue
		}
		if cand != nil && cand.total == total && at-cand.at >= scanSettle {
			return cand.at, cand.cpu, ""
		}
		if cand == nil || cand.total != total {
			cand = &check{at: at, cpu: cpu, total: total}
		}
		r.Logf("scan: %s; checking again", last)
	}
}

// scanCPU is the user + system CPU time of the processes so far, the
// exited ones included.
func scanCPU(procs []*proc) (float64, error) {
	sum := 0.0
	for _, p := range procs {
		if p.exited() {
			ps := p.cmd.ProcessState
			sum += (ps.UserTime() + ps.SystemTime()).Seconds()
			continue
		}
		c, err := p.cpuSeconds()
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// scanPeakRSS is the sum of the processes' peak resident sets since they
// started (VmHWM, or for an exited one the largest VmHWM read while it
// ran: see proc.hwm).
func scanPeakRSS(procs []*proc) int64 {
	var sum int64
	for _, p := range procs {
		if p.exited() {
			sum += p.hwm.Load()
			continue
		}
		if v, err := p.peakRSS(); err == nil {
			sum += v
		}
	}
	return sum
}

// startVerdictScan starts verdict serve (the ClusterPolicies from the API
// server) and verdict reports serve --kubeconfig (Kyverno's layout, the
// default, unless writerArgs say otherwise), waits until the server has every policy ready and the writer
// serves, then runs verdict scan --kubeconfig --report-writer.
func startVerdictScan(ctx context.Context, r *runner, o options, kubeconfig string, writerArgs ...string) *scanSystem {
	grpcAddr, writerAddr, writerMetrics := fmt.Sprintf("127.0.0.1:%d", freePort()), fmt.Sprintf("127.0.0.1:%d", freePort()), fmt.Sprintf("127.0.0.1:%d", freePort())
	srv, err := start(r, r.dir, "verdict-serve", o.cpus, o.gomaxprocs, nil, o.verdict, "serve",
		"--kubeconfig", kubeconfig, "--listen", grpcAddr, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", freePort()))
	if err != nil {
		r.Fatalf("%v", err)
	}
	writer, err := start(r, r.dir, "verdict-reports", o.cpus, o.gomaxprocs, nil, o.verdict, append([]string{"reports", "serve",
		"--kubeconfig", kubeconfig, "--listen", writerAddr, "--metrics-listen", writerMetrics,
		"--store", filepath.Join(r.dir, "reports.db"), "--lease-namespace", "default"}, writerArgs...)...)
	if err != nil {
		r.Fatalf("%v", err)
	}
	want, err := countPolicies(o.policies)
	if err != nil {
		r.Fatalf("%v", err)
	}
	c, err := vclient.Dial(grpcAddr, vclient.Options{})
	if err != nil {
		r.Fatalf("%v", err)
	}
	defer c.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for _, p := range []*proc{srv, writer} {
			if p.exited() {
				r.Fatalf("%s exited:\n%s", p.name, tailLog(p.log, 40))
			}
		}
		ready := 0
		if ps, err := c.ListPolicies(ctx); err == nil {
			for _, p := range ps.GetPolicies() {
				if p.GetReady() {
					ready++
				}
			}
		}
		if ready >= want && writerLeads(writerAddr) {
			break
		}
		if time.Now().After(deadline) {
			r.Fatalf("verdict: %d of %d policies ready, writer leading: %t after 2 minutes", ready, want, writerLeads(writerAddr))
		}
		time.Sleep(100 * time.Millisecond)
	}
	scan, err := start(r, r.dir, "verdict-scan", o.cpus, o.gomaxprocs, nil, o.verdict, "scan",
		"--server", grpcAddr, "--kubeconfig", kubeconfig, "--report-writer", writerAddr, "--progress", "never")
	if err != nil {
		r.Fatalf("%v", err)
	}
	scan.oneShot = true
	ready := time.Now()
	return &scanSystem{procs: []*proc{srv, writer, scan}, idle: func() (bool, string) {
		if !scan.exited() {
			return false, "verdict scan running"
		}
		if code := scan.cmd.ProcessState.ExitCode(); code != 0 {
			r.Fatalf("verdict scan exited with %d:\n%s", code, tailLog(scan.log, 40))
		}
		pending, err := metricSum(writerMetrics, "verdict_reports_api_pending")
		if err != nil || pending > 0 {
			return false, fmt.Sprintf("writer: %g pending (%v)", pending, err)
		}
		return true, "scan done, writer idle"
	}, final: func() []string {
		var out []string
		for _, m := range []string{"verdict_events_total", "verdict_events_dropped_total"} {
			if s, err := metricSamples(writerMetrics, m); err == nil && s != "" {
				out = append(out, "writer: "+s)
			}
		}
		return out
	}, timeline: func(start time.Time) string {
		return fmt.Sprintf("serve (%d policies ready) and writer (leading) at %.1f s; verdict scan ran from then until %.1f s", want, ready.Sub(start).Seconds(), scan.endedAt.Sub(start).Seconds())
	}}
}

// writerLeads reports whether the report writer serves (it does once it
// holds its Lease).
func writerLeads(addr string) bool {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return false
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

// countPolicies is the number of ClusterPolicies in a file.
func countPolicies(path string) (int, error) {
	objs, err := readObjects(path)
	n := 0
	for _, o := range objs {
		if o.GetKind() == "ClusterPolicy" {
			n++
		}
	}
	return n, err
}

// startKyvernoReports starts Kyverno's reports controller: background scan
// on, aggregation to PolicyReports on, admission reports off (no admission
// controller runs), the events the Helm chart omits omitted.
func startKyvernoReports(r *runner, o options, kubeconfig string) *scanSystem {
	env := []string{"KYVERNO_NAMESPACE=kyverno", "KYVERNO_POD_NAME=kyverno-reports-peer", "KYVERNO_DEPLOYMENT=kyverno-reports-controller",
		"KYVERNO_SERVICEACCOUNT_NAME=kyverno-reports-controller", "INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics"}
	p, err := start(r, r.dir, "kyverno-reports", o.cpus, o.gomaxprocs, env, o.kyvernoReportsBin, kyvernoReportsArgs(kubeconfig)...)
	if err != nil {
		r.Fatalf("%v", err)
	}
	return &scanSystem{procs: []*proc{p}, idle: func() (bool, string) { return true, "" }}
}

func kyvernoReportsArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig", kubeconfig,
		"--backgroundScan=true", "--aggregateReports=true", "--policyReports=true", "--admissionReports=false",
		"--omitEvents=PolicyApplied,PolicySkipped",
		"--metricsHost", "127.0.0.1", "--metricsPort", strconv.Itoa(freePort()),
		"--autoMemLimitEnabled=false",
		"--loggingFormat", "text", "--disableLogColor",
	}
}

// metricSum adds the samples of a Prometheus metric (any labels) at
// addr/metrics.
func metricSum(addr, metric string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, sc.Err()
}

// metricSamples returns the samples of a Prometheus metric at
// addr/metrics, as they are written, comma-separated.
func metricSamples(addr, metric string) (string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, metric+"{") || strings.HasPrefix(line, metric+" ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, ", "), sc.Err()
}

// apiWrites reads the apiserver's apiserver_request_total and returns the
// write requests (POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION) by
// "VERB group/resource[/subresource]".
func apiWrites(hc *http.Client, url string) (map[string]float64, error) {
	resp, err := hc.Get(url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(line, "} ")
		if !ok {
			continue
		}
		l := parseLabels(labels)
		switch l["verb"] {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		default:
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, err
		}
		res := l["resource"]
		if l["group"] != "" {
			res = l["group"] + "/" + res
		}
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[l["verb"]+" "+res] += v
	}
	return out, sc.Err()
}

// parseLabels parses name="value",... (the values of apiserver metrics
// hold no escaped quotes).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		value, rest, _ := strings.Cut(rest, `"`)
		out[name] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

type kv struct {
	key   string
	value []byte
}

func kvBytes(kvs []kv) int {
	n := 0
	for _, e := range kvs {
		n += len(e.value)
	}
	return n
}

// etcdPost posts a range request to etcd's JSON gateway.
func etcdPost(etcdURL, prefix string, extra map[string]any, out any) error {
	end := []byte(prefix)
	end[len(end)-1]++
	req := map[string]any{
		"key":       base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString(end),
	}
	for k, v := range extra {
		req[k] = v
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(etcdURL+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("etcd range %s: %s: %s", prefix, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("etcd range %s: %w", prefix, err)
	}
	return nil
}

// etcdCount is the number of keys under prefix.
func etcdCount(etcdURL, prefix string) (int, error) {
	var out struct {
		Count string `json:"count"`
	}
	if err := etcdPost(etcdURL, prefix, map[string]any{"count_only": true}, &out); err != nil {
		return 0, err
	}
	if out.Count == "" {
		return 0, nil
	}
	return strconv.Atoi(out.Count)
}

// etcdRange reads the keys and values under prefix.
func etcdRange(etcdURL, prefix string, keysOnly bool) ([]kv, error) {
	var out struct {
		KVs []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := etcdPost(etcdURL, prefix, map[string]any{"keys_only": keysOnly}, &out); err != nil {
		return nil, err
	}
	kvs := make([]kv, 0, len(out.KVs))
	for _, e := range out.KVs {
		k, _ := base64.StdEncoding.DecodeString(e.Key)
		v, _ := base64.StdEncoding.DecodeString(e.Value)
		kvs = append(kvs, kv{key: string(k), value: v})
	}
	return kvs, nil
}

// report is what countEntries reads of a PolicyReport: Kyverno's are one
// per resource (scope), Verdict's in Kyverno's layout one per policy and
// namespace, each result naming its resources.
type report struct {
	Scope *struct {
		Kind, Namespace, Name string
	} `json:"scope"`
	Results []struct {
		Policy    string `json:"policy"`
		Result    string `json:"result"`
		Resources []struct {
			Kind, Namespace, Name string
		} `json:"resources"`
	} `json:"results"`
}

// countEntries counts the entries (a resource's result of a rule) of the
// PolicyReports by policy and result, and the Pods with at least one.
func countEntries(kvs []kv) (map[string]map[string]int, int, int) {
	by := map[string]map[string]int{}
	pods := map[string]bool{}
	total := 0
	for _, e := range kvs {
		if !strings.Contains(e.key, "/policyreports/") {
			continue
		}
		var rep report
		if err := json.Unmarshal(e.value, &rep); err != nil {
			continue
		}
		for _, res := range rep.Results {
			n := len(res.Resources)
			for _, o := range res.Resources {
				if o.Kind == "Pod" {
					pods[o.Namespace+"/"+o.Name] = true
				}
			}
			if n == 0 && rep.Scope != nil {
				n = 1
				if rep.Scope.Kind == "Pod" {
					pods[rep.Scope.Namespace+"/"+rep.Scope.Name] = true
				}
			}
			if by[res.Policy] == nil {
				by[res.Policy] = map[string]int{}
			}
			by[res.Policy][res.Result] += n
			total += n
		}
	}
	return by, total, len(pods)
}

// pids are processes measured together.
type pids []int

func (ps pids) cpu() float64 {
	sum := 0.0
	for _, p := range ps {
		if c, err := pidCPUSeconds(p); err == nil {
			sum += c
		}
	}
	return sum
}

// controlPlane finds the etcd and kube-apiserver of a cluster: the
// processes whose command line names its folder.
func controlPlane(dir string) pids {
	var out pids
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(dir+"/")) {
			out = append(out, pid)
		}
	}
	return out
}
