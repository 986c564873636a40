// Command peer runs Verdict and Kyverno v1.19.0 side by side against the
// kube-apiserver + etcd of Verdict's e2e tests, with the same 17
// pod-security ClusterPolicies and the same CPU limit for each.
//
// Its admission part (the default; -only admission) runs Verdict's decision
// server + webhook proxy and Kyverno's admission controller on one cluster
// with the same AdmissionReviews, and prints one table: p50, p99, p99.9,
// throughput, CPU seconds per 1,000 reviews and peak RSS of each, for
// open-loop rates, closed loops of 16/100/500 reviews in flight, and Pod
// creates through the API server.
//
// Its scan part (-only scan; -only all runs both) populates a fresh
// cluster per system with -scan-pods Pods in 50 namespaces, creates the
// policies, then starts the scanning system: verdict serve, verdict reports
// serve --kubeconfig and verdict scan --kubeconfig --report-writer, or
// Kyverno's reports controller (background scan and aggregation on,
// admission reports off). It prints the time until the final reports hold
// every Pod's entries with nothing intermediary left, the CPU seconds and
// peak RSS of the system's processes, the API write requests (from the
// apiserver's apiserver_request_total), the report and intermediary
// objects and their bytes in etcd, and the entries by policy and result of
// each system side by side.
//
// It is its own module so that Verdict never depends on Kyverno: Kyverno's
// binaries are built from the module cache (make bench-peer builds the
// admission controller).
//
//	make bench-peer
//	make bench-peer PEER_FLAGS='-only scan'
//	go run . -kyverno /tmp/peer/kyverno -verdict ../../bin/verdict -e2e-bin ../../bin/e2e
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

type options struct {
	kyverno, verdict, e2eBin string
	crds, policies           string
	cpus, loadCPUs           string
	gomaxprocs               int
	warmup, duration         time.Duration
	rates                    []float64
	concurrency              []int
	maxInFlight              int
	apiConcurrency           int
	only                     string
	systems, parts           map[string]bool // of only
	kyvernoReports           bool
	timeout                  time.Duration
	kyvernoReportsBin        string
	scanPods                 int
	scanTimeout              time.Duration
	verdictGrouped           bool
}

// runs reports whether -only selects the system ("verdict" or "kyverno").
func (o options) runs(system string) bool { return len(o.systems) == 0 || o.systems[system] }

// part reports whether -only selects the part ("admission" or "scan").
func (o options) part(p string) bool { return o.parts[p] }

// parseOnly reads -only: a comma-separated list of systems (verdict,
// kyverno; both: each) and parts (admission, scan; all: each). No system
// named: both; no part named: admission.
func (o *options) parseOnly() error {
	o.systems, o.parts = map[string]bool{}, map[string]bool{}
	for _, w := range strings.Split(o.only, ",") {
		switch w = strings.TrimSpace(w); w {
		case "verdict", "kyverno":
			o.systems[w] = true
		case "admission", "scan":
			o.parts[w] = true
		case "all":
			o.parts["admission"], o.parts["scan"] = true, true
		case "both", "":
		default:
			return fmt.Errorf("-only: %q is none of verdict, kyverno, both, admission, scan, all", w)
		}
	}
	if len(o.parts) == 0 {
		o.parts["admission"] = true
	}
	return nil
}

func main() {
	var o options
	var rates, conc string
	modcache := strings.TrimSpace(goEnv("GOMODCACHE"))
	flag.StringVar(&o.kyverno, "kyverno", "/tmp/peer/kyverno", "Kyverno's admission controller binary (cmd/kyverno of github.com/kyverno/kyverno@v1.19.0)")
	flag.StringVar(&o.verdict, "verdict", "../../bin/verdict", "the verdict binary")
	flag.StringVar(&o.e2eBin, "e2e-bin", "../../bin/e2e", "folder of kube-apiserver and etcd (make e2e-bins)")
	flag.StringVar(&o.crds, "crds", filepath.Join(modcache, "github.com/kyverno/kyverno@v1.19.0/config/crds"), "Kyverno's CRDs (a folder of YAML)")
	flag.StringVar(&o.policies, "policies", "policies/pod-security.yaml", "the ClusterPolicies installed for both")
	flag.StringVar(&o.cpus, "cpus", "1", "CPUs of each system under test (taskset -c list)")
	flag.IntVar(&o.gomaxprocs, "gomaxprocs", 1, "GOMAXPROCS of each process of the systems under test (0: unset)")
	flag.StringVar(&o.loadCPUs, "load-cpus", "0", "CPUs of the load generator, etcd and the apiserver (taskset -c list; empty: no pinning)")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "warm-up of each scenario, not counted")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured time of each scenario")
	flag.StringVar(&rates, "rates", "50,200,1000", "open-loop rates, reviews a second")
	flag.StringVar(&conc, "concurrency", "16,100,500", "closed-loop reviews in flight")
	flag.IntVar(&o.maxInFlight, "max-in-flight", 2000, "open loop: most reviews outstanding; later arrivals are counted as dropped")
	flag.IntVar(&o.apiConcurrency, "api-concurrency", 16, "Pod creates (dry run) in flight through the API server; 0: skip")
	flag.StringVar(&o.only, "only", "both", "systems (verdict, kyverno, both) and parts (admission: the webhook scenarios; scan: the background scan of -scan-pods; all), comma-separated; no part named: admission")
	flag.StringVar(&o.kyvernoReportsBin, "kyverno-reports", "", "Kyverno's reports controller binary (cmd/reports-controller of github.com/kyverno/kyverno@v1.19.0; default: reports-controller-v1.19.0 next to -kyverno)")
	flag.IntVar(&o.scanPods, "scan-pods", 5000, "Pods of the background scan scenario, in 50 namespaces (0: no scan scenario)")
	flag.BoolVar(&o.verdictGrouped, "scan-group-results", false, "scan: also Verdict with verdict reports serve --group-results (results grouped by outcome: smaller reports)")
	flag.DurationVar(&o.scanTimeout, "scan-timeout", 20*time.Minute, "longest wait for one system's reports to converge")
	flag.BoolVar(&o.kyvernoReports, "kyverno-admission-reports", false, "Kyverno's --admissionReports (its default is true; the harness runs no reports controller to aggregate them)")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline of one review")
	flag.Parse()
	if err := o.parseOnly(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if o.kyvernoReportsBin == "" {
		o.kyvernoReportsBin = filepath.Join(filepath.Dir(o.kyverno), "reports-controller-v1.19.0")
	}
	for _, s := range strings.Split(rates, ",") {
		if s = strings.TrimSpace(s); s != "" {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v <= 0 {
				fmt.Fprintf(os.Stderr, "-rates: %q is not a positive number\n", s)
				os.Exit(2)
			}
			o.rates = append(o.rates, v)
		}
	}
	for _, s := range strings.Split(conc, ",") {
		if s = strings.TrimSpace(s); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v <= 0 {
				fmt.Fprintf(os.Stderr, "-concurrency: %q is not a positive integer\n", s)
				os.Exit(2)
			}
			o.concurrency = append(o.concurrency, v)
		}
	}
	r, err := newRunner()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; r.Fatalf("interrupted") }()
	run(r, o)
	r.close()
	_ = os.RemoveAll(r.dir)
}

func goEnv(name string) string {
	out, err := execOutput("go", "env", name)
	if err != nil {
		return ""
	}
	return out
}

func run(r *runner, o options) {
	if o.loadCPUs != "" {
		if err := pin(o.loadCPUs); err != nil {
			r.Fatalf("pinning the load generator to CPUs %s: %v", o.loadCPUs, err)
		}
	}
	for _, p := range []struct{ who, path string }{{"verdict", o.verdict}, {"kyverno", o.kyverno}} {
		if !o.runs(p.who) || (p.who == "kyverno" && !o.part("admission")) {
			continue
		}
		if _, err := os.Stat(p.path); err != nil {
			r.Fatalf("%v", err)
		}
	}
	e2eBin, err := filepath.Abs(o.e2eBin)
	if err != nil {
		r.Fatalf("%v", err)
	}
	os.Setenv(e2e.BinDirEnv, e2eBin)
	ctx := context.Background()
	fmt.Println(environment(o))
	var results []*result
	if o.part("admission") {
		results = admission(ctx, r, o)
		printTable(os.Stdout, o, results)
	}
	if o.part("scan") && o.scanPods > 0 {
		scans := scanScenario(ctx, r, o)
		if len(results) > 0 {
			fmt.Println()
		}
		printScanTable(os.Stdout, o, scans)
	}
}

// admission runs the admission scenarios of each system on one cluster.
func admission(ctx context.Context, r *runner, o options) []*result {
	// Its own runner: the cluster and the systems stop at the end.
	r = r.child()
	defer r.close()
	r.Logf("starting etcd and kube-apiserver from %s", os.Getenv(e2e.BinDirEnv))
	cl := e2e.Start(r, e2e.Options{})
	kubeconfig := filepath.Join(r.dir, "kubeconfig")
	if err := writeKubeconfig(cl, kubeconfig); err != nil {
		r.Fatalf("kubeconfig: %v", err)
	}
	n, err := install(ctx, cl.Config, o.crds, o.policies, []string{"kyverno", benchNamespace})
	if err != nil {
		r.Fatalf("install: %v", err)
	}
	r.Logf("installed Kyverno's CRDs and %d ClusterPolicies from %s", n, o.policies)

	set := newReviewSet(1024)
	c := newClient(o.timeout)
	var results []*result
	if o.runs("verdict") {
		s := startVerdict(r, o, kubeconfig)
		waitReady(r, c, s, set)
		results = append(results, scenarios(ctx, r, o, c, s, set, func() []*result {
			return apiServerScenario(ctx, r, o, cl, s, verdictWebhook(s))
		})...)
		s.stop()
	}
	if o.runs("kyverno") {
		s := startKyverno(r, o, kubeconfig)
		waitReady(r, c, s, set)
		results = append(results, scenarios(ctx, r, o, c, s, set, func() []*result {
			return apiServerScenario(ctx, r, o, cl, s, nil)
		})...)
		s.stop()
	}
	return results
}

// pin sets the CPU affinity of every thread of this process.
func pin(list string) error {
	var set unix.CPUSet
	for _, part := range strings.Split(list, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a > b {
			return fmt.Errorf("bad CPU list %q", list)
		}
		for i := a; i <= b; i++ {
			set.Set(i)
		}
	}
	// The runtime's threads: each is a task of the process.
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return err
		}
	}
	return nil
}

func environment(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bench-peer  %s\n", time.Now().UTC().Format(time.RFC3339))
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# machine: %s, %d CPUs (%s), load average %s\n", host, runtime.NumCPU(), cpuModel(), loadAvg())
	fmt.Fprintf(&b, "# systems under test: taskset -c %s, GOMAXPROCS=%d for every process; load generator, etcd, kube-apiserver: taskset -c %s\n", o.cpus, o.gomaxprocs, o.loadCPUs)
	v, _ := execOutput(o.verdict, "version")
	v, _, _ = strings.Cut(v, "\n")
	fmt.Fprintf(&b, "# verdict: %s (serve + webhook, GC target 400)\n", strings.TrimSpace(v))
	fmt.Fprintf(&b, "# kyverno: %s (cmd/kyverno of github.com/kyverno/kyverno@v1.19.0; --admissionReports=%t)\n", o.kyverno, o.kyvernoReports)
	fmt.Fprintf(&b, "# policies: %s; reviews: CREATE of a Pod and a Deployment that pass the restricted profile and of a Pod and a Deployment that fail it, in turn\n", o.policies)
	fmt.Fprintf(&b, "# each admission scenario: %s warm-up, %s measured\n", o.warmup, o.duration)
	if o.part("scan") && o.scanPods > 0 {
		fmt.Fprintf(&b, "# background scan: %d Pods (two containers; every tenth privileged, every seventh on the host network) in %d namespaces, then the policies, on a fresh etcd + kube-apiserver per system; verdict serve + verdict reports serve --kubeconfig + verdict scan --kubeconfig --report-writer; kyverno: %s %s\n",
			o.scanPods, scanNamespaces, o.kyvernoReportsBin, strings.Join(kyvernoReportsArgs("KUBECONFIG")[2:], " "))
	}
	return b.String()
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown"
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startVerdict(r *runner, o options, kubeconfig string) *system {
	grpcPort, hookPort := freePort(), freePort()
	dir := r.dir
	srv, err := start(r, dir, "verdict-serve", o.cpus, o.gomaxprocs, nil, o.verdict, "serve",
		"--kubeconfig", kubeconfig, "--listen", fmt.Sprintf("127.0.0.1:%d", grpcPort),
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", freePort()))
	if err != nil {
		r.Fatalf("%v", err)
	}
	hook, err := start(r, dir, "verdict-webhook", o.cpus, o.gomaxprocs, nil, o.verdict, "webhook",
		"--server", fmt.Sprintf("127.0.0.1:%d", grpcPort), "--listen", fmt.Sprintf("127.0.0.1:%d", hookPort),
		"--self-signed", "--ca-bundle-out", filepath.Join(dir, "verdict-ca.pem"),
		"--kubeconfig", kubeconfig, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", freePort()))
	if err != nil {
		r.Fatalf("%v", err)
	}
	return &system{name: "Verdict", procs: []*proc{srv, hook}, url: fmt.Sprintf("https://127.0.0.1:%d", hookPort)}
}

func startKyverno(r *runner, o options, kubeconfig string) *system {
	port := freePort()
	// The variables a Kyverno pod gets from its Helm chart (cmd/internal/check.go
	// requires them).
	env := []string{"KYVERNO_NAMESPACE=kyverno", "KYVERNO_POD_NAME=kyverno-peer", "KYVERNO_DEPLOYMENT=kyverno-admission-controller",
		"KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller", "INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics", "KYVERNO_SVC=kyverno-svc"}
	p, err := start(r, r.dir, "kyverno", o.cpus, o.gomaxprocs, env, o.kyverno,
		"--kubeconfig", kubeconfig,
		"--serverIP", fmt.Sprintf("127.0.0.1:%d", port),
		"--webhookServerHost", "127.0.0.1", "--webhookServerPort", strconv.Itoa(port), "--servicePort", strconv.Itoa(port),
		"--caSecretName", "kyverno-svc.kyverno.svc.kyverno-tls-ca", "--tlsSecretName", "kyverno-svc.kyverno.svc.kyverno-tls-pair",
		"--metricsHost", "127.0.0.1", "--metricsPort", strconv.Itoa(freePort()),
		"--controllerRuntimeMetricsAddress", "0",
		"--admissionReports="+strconv.FormatBool(o.kyvernoReports),
		"--autoMemLimitEnabled=false",
		"--loggingFormat", "text", "--disableLogColor",
	)
	if err != nil {
		r.Fatalf("%v", err)
	}
	return &system{name: "Kyverno", procs: []*proc{p}, url: fmt.Sprintf("https://127.0.0.1:%d", port)}
}

// waitReady waits until the system answers every kind of review with
// Kyverno's decision (policies loaded, webhook serving).
func waitReady(r *runner, c *client, s *system, set *reviewSet) {
	deadline := time.Now().Add(5 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range s.procs {
			if p.exited() {
				r.Fatalf("%s exited:\n%s", p.name, tailLog(p.log, 40))
			}
		}
		ok := true
		for i := range kinds {
			allowed, err := c.post(context.Background(), s.url, set.bodies[i])
			if err != nil {
				last, ok = err, false
				break
			}
			if allowed != kinds[set.kind[i]].allowed {
				last, ok = fmt.Errorf("%s: allowed=%t", kinds[set.kind[i]].name, allowed), false
				break
			}
		}
		if ok {
			r.Logf("%s ready", s.name)
			return
		}
		time.Sleep(time.Second)
	}
	var logs strings.Builder
	for _, p := range s.procs {
		fmt.Fprintf(&logs, "--- %s\n%s\n", p.name, tailLog(p.log, 40))
	}
	r.Fatalf("%s not ready after 5 minutes (last: %v)\n%s", s.name, last, logs.String())
}

// measure runs f with the system's CPU time and peak RSS taken around it.
// A system whose process exited during f gets a result marked exited.
func measure(r *runner, s *system, scenario string, f func(rec *recorder) time.Duration) *result {
	res := &result{system: s.name, scenario: scenario}
	rec := &recorder{res: res}
	err := s.resetPeak()
	var cpu0 float64
	if err == nil {
		cpu0, err = s.cpuSeconds()
	}
	if err != nil {
		res.exited = s.exitedName()
		if res.exited == "" {
			r.Fatalf("%s: %v", s.name, err)
		}
		r.Logf("%s %s: %s exited before the scenario", s.name, scenario, res.exited)
		return res
	}
	res.elapsed = f(rec)
	res.load1 = strings.Fields(loadAvg())[0]
	res.sortLatencies()
	cpu1, err := s.cpuSeconds()
	if err == nil {
		res.peakRSS, err = s.peakRSS()
	}
	if err != nil || s.exited() {
		res.exited = s.exitedName()
		if res.exited == "" {
			r.Fatalf("%s: %v", s.name, err)
		}
		r.Logf("%s %s: %s exited during the scenario", s.name, scenario, res.exited)
		return res
	}
	res.cpu = cpu1 - cpu0
	r.Logf("%s %s: %d reviews, p99 %v, %d errors, %d wrong", s.name, scenario, len(res.latencies), percentile(res.latencies, 0.99), res.errors, res.wrong)
	return res
}

// Idle detection before each scenario: the previous one may have left a
// backlog (an open loop above capacity), which would be charged to the
// next.
const (
	idleCPU     = 0.05 // CPU seconds per second under which a system is idle
	idleTimeout = 2 * time.Minute
)

// drain waits until the system uses less than idleCPU for a second, at
// most idleTimeout; it reports whether it became idle.
func drain(r *runner, s *system) bool {
	deadline := time.Now().Add(idleTimeout)
	for time.Now().Before(deadline) && !s.exited() {
		c0, err := s.cpuSeconds()
		if err != nil {
			return false
		}
		time.Sleep(time.Second)
		c1, err := s.cpuSeconds()
		if err != nil {
			return false
		}
		if c1-c0 < idleCPU {
			return true
		}
	}
	r.Logf("%s still busy after %v", s.name, idleTimeout)
	return false
}

// scenarios runs the closed loops, the creates through the API server
// (api, when o.apiConcurrency > 0), then the open loops from the lowest
// rate up (the last ones may overload the system), each after the system
// is idle again.
func scenarios(ctx context.Context, r *runner, o options, c *client, s *system, set *reviewSet, api func() []*result) []*result {
	var out []*result
	for _, n := range o.concurrency {
		if s.exited() {
			return out
		}
		drain(r, s)
		out = append(out, measure(r, s, fmt.Sprintf("closed loop %d in flight", n), func(rec *recorder) time.Duration {
			return closedLoop(ctx, c, s.url, set, n, o.warmup, o.duration, rec)
		}))
	}
	if o.apiConcurrency > 0 && !s.exited() {
		drain(r, s)
		out = append(out, api()...)
	}
	rates := slices.Clone(o.rates)
	slices.Sort(rates)
	for _, rate := range rates {
		if s.exited() {
			return out
		}
		drain(r, s)
		out = append(out, measure(r, s, fmt.Sprintf("open loop %g/s", rate), func(rec *recorder) time.Duration {
			return openLoop(ctx, c, s.url, set, rate, o.maxInFlight, o.warmup, o.duration, rec)
		}))
	}
	return out
}
