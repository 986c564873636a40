package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/kubeconfig"
	"github.com/verdict-policy/verdict/internal/kubeevents"
	"github.com/verdict-policy/verdict/internal/kubemetrics"
	"github.com/verdict-policy/verdict/publish"
	"github.com/verdict-policy/verdict/scanner"
)

// scanFlags are the flags of `verdict scan`.
type scanFlags struct {
	conn connFlags // --server and the connection flags

	files       []string
	maxDocument int
	kubeconfig  string
	kubeContext string
	inCluster   bool

	shard           string
	interval        time.Duration
	policyPoll      time.Duration
	batchSize       int
	maxInFlight     int
	pageSize        int64
	output          string
	failOnViolation bool
	reportWriter    string
	reportShards    int
	writerConn      writerConnFlags
	generate        bool
	progress        string
	logLevel        string
	watch           bool
	watchDelay      time.Duration
	watchBatch      int
	metricsListen   string
	kube            kubeRateFlags
	events          eventsFlags
}

func newScanCmd() *cobra.Command {
	var fl scanFlags
	cmd := &cobra.Command{
		Use:   "scan --server HOST:PORT (-f PATH... | --kubeconfig FILE | --in-cluster)",
		Short: "Scan stored resources in background mode on a decision server",
		Long: `Send existing resources to a decision server (verdict serve or verdict run)
in background mode, in batches over one stream, as Kyverno's background scan
evaluates them: policies with background: false and rules that need
admission data (userInfo, roles, subjects) are skipped.

Resources come from files and folders (-f: YAML or JSON, multi-document,
folders read recursively) or from a cluster (--kubeconfig, --in-cluster):
the kinds the server's policies match are listed page by page, with the
labels of their namespace.

Without --report-writer the results are printed like verdict apply: the
failed rules of each resource, then "pass: N, fail: N, warn: N, error: N,
skip: N" (-o yaml or -o json: every result). With --report-writer they go
to the report writer instead.

--shard i/n scans the namespaces whose FNV-1a hash modulo n is i (the
cluster-scoped resources belong to the shard of the namespace ""), so n
scanners, such as the pods of an Indexed Job, split a cluster.

In a cluster, policies with generateExisting are replayed for the existing
triggers they match, and what they generate is written by server-side apply
(field manager verdict, label kyverno.io/background-gen-rule), once per
trigger and policy version (--generate-existing=false turns it off).

--interval repeats the scan; between scans, a policy whose version changes
is rescanned alone (checked every --policy-poll).

--watch (a cluster only) keeps going after the first scan: the resources of
the shard that are added or changed (in anything a policy sees: not the
status alone) are evaluated within --watch-delay, in rounds of at most
--watch-batch, and the deleted ones leave the reports. It runs until
SIGTERM or Ctrl-C; --interval then repeats the full scan from the watch's
cache.

Progress (resources done of total, resources per second) is shown on
stderr when it is a terminal. The exit code is 2 when the scan could not
run or a resource could not be evaluated, and, with --fail-on-violation, 1
when a rule failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runScan(cmd.Context(), fl, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	fl.conn.register(f, decisionServerHelp)
	f.StringSliceVarP(&fl.files, "filename", "f", nil, "resource files or folders to scan")
	f.StringSliceVar(&fl.files, "files", nil, "same as -f")
	f.IntVar(&fl.maxDocument, "max-document-bytes", kyverno.DefaultMaxDocumentBytes, "largest YAML or JSON document of the -f files, in bytes")
	f.StringVar(&fl.kubeconfig, "kubeconfig", "", "scan the cluster of this kubeconfig file")
	f.StringVar(&fl.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	f.BoolVar(&fl.inCluster, "in-cluster", false, "scan the cluster the scanner runs in (its service account)")
	f.StringVar(&fl.shard, "shard", "", "scan shard i of n (i/n, such as 0/4; default: everything)")
	f.DurationVar(&fl.interval, "interval", 0, "repeat the scan at this interval (default: scan once)")
	f.DurationVar(&fl.policyPoll, "policy-poll", scanner.DefaultPolicyPoll, "with --interval, how often policy versions are checked for a rescan of the changed policies")
	f.IntVar(&fl.batchSize, "batch-size", scanner.DefaultBatchSize, "resources per batch (at most the server's --max-batch-size)")
	f.IntVar(&fl.maxInFlight, "max-in-flight", scanner.DefaultMaxInFlight, "batches sent and not answered yet")
	f.Int64Var(&fl.pageSize, "page-size", scanner.DefaultPageSize, "objects per list call in a cluster")
	f.StringVarP(&fl.output, "output", "o", "table", "output format: table, yaml or json")
	f.BoolVar(&fl.failOnViolation, "fail-on-violation", false, "exit with 1 when a rule failed")
	f.StringVar(&fl.reportWriter, "report-writer", "", "send the results to this report writer (host:port) instead of printing them; with --report-shards, an address with {shard}")
	f.IntVar(&fl.reportShards, "report-shards", 1, "number of report writer shards: each result goes to the writer of its namespace's shard, {shard} of --report-writer")
	fl.writerConn.register(f, " (without any --report-writer-* flag, the writer connection uses the TLS and token of --server's)")
	f.BoolVar(&fl.generate, "generate-existing", true, "in a cluster, apply what generateExisting rules generate for existing triggers")
	f.StringVar(&fl.progress, "progress", "auto", "progress on stderr: auto (when stderr is a terminal), always or never")
	f.StringVar(&fl.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	f.BoolVar(&fl.watch, "watch", false, "in a cluster, after the first scan, watch the resources of the shard and evaluate what is added or changed, report what is deleted, until stopped")
	f.DurationVar(&fl.watchDelay, "watch-delay", scanner.DefaultWatchDelay, "with --watch, the longest a change waits before it is evaluated")
	f.IntVar(&fl.watchBatch, "watch-batch", scanner.DefaultWatchBatch, "with --watch, the most changes evaluated in one round")
	fl.kube.register(f)
	fl.events.register(f)
	f.StringVar(&fl.metricsListen, "metrics-listen", "", "Prometheus /metrics listen address, HOST:PORT (empty: no metrics endpoint)")
	return cmd
}

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// textLogger returns a logger of text lines on w at the --log-level
// level (debug, info, warn or error); another level is a usage error.
func textLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func runScan(ctx context.Context, fl scanFlags, stdout, stderr io.Writer) error {
	modes := 0
	for _, on := range []bool{len(fl.files) > 0, fl.kubeconfig != "", fl.inCluster} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return usageError("give one of -f/--files, --kubeconfig or --in-cluster")
	}
	switch fl.output {
	case "table", "yaml", "json":
	default:
		return usageError("invalid output format %q: want table, yaml or json", fl.output)
	}
	shard, err := scanner.ParseShard(fl.shard)
	if err != nil {
		return usageError("--shard: %v", err)
	}
	if fl.batchSize <= 0 || fl.maxInFlight <= 0 || fl.pageSize <= 0 {
		return usageError("--batch-size, --max-in-flight and --page-size must be positive")
	}
	if fl.interval < 0 || fl.policyPoll <= 0 {
		return usageError("--interval must not be negative, --policy-poll must be positive")
	}
	if fl.watch && len(fl.files) > 0 {
		return usageError("--watch needs a cluster (--kubeconfig or --in-cluster), not files")
	}
	if fl.watchDelay <= 0 || fl.watchBatch <= 0 {
		return usageError("--watch-delay and --watch-batch must be positive")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	log, err := textLogger(stderr, fl.logLevel)
	if err != nil {
		return err
	}
	var progress io.Writer
	switch fl.progress {
	case "auto":
		if isTerminal(stderr) {
			progress = stderr
		}
	case "always":
		progress = stderr
	case "never":
	default:
		return usageError("--progress %q: want auto, always or never", fl.progress)
	}
	copts, err := fl.conn.clientOptions()
	if err != nil {
		return usageError("%v", err)
	}

	opts := scanner.Options{
		Shard:       shard,
		BatchSize:   fl.batchSize,
		MaxInFlight: fl.maxInFlight,
		Progress:    progress,
		Logger:      log,
	}
	var reg *prometheus.Registry
	if fl.metricsListen != "" {
		reg = newMetricsRegistry()
		opts.Registry = reg
		stopMetrics, err := serveMetrics(fl.metricsListen, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), log)
		if err != nil {
			return usageError("--metrics-listen: %v", err)
		}
		defer stopMetrics()
	}
	var (
		source  func(*scanner.PolicySet) scanner.Source
		cluster *scanner.Cluster
	)
	if len(fl.files) > 0 {
		fopts := scanner.FileOptions{MaxDocumentBytes: fl.maxDocument, Logger: log}
		fs, err := scanner.NewFileSource(ctx, fl.files, fopts)
		if err != nil {
			return usageError("%v", err)
		}
		src := fs.Rereading()
		source = func(*scanner.PolicySet) scanner.Source { return src }
	} else {
		cfg, err := fl.kube.load(fl.kubeconfig, fl.kubeContext, fl.inCluster, "verdict-scan")
		if err != nil {
			return usageError("%v", err)
		}
		if reg != nil {
			if err := countKubeRequests(cfg, reg, kubemetrics.DefaultMaxSeries); err != nil {
				return err
			}
		}
		dyn, disc, err := kubeClients(cfg)
		if err != nil {
			return usageError("%v", err)
		}
		cached := memory.NewMemCacheClient(disc)
		cluster, err = scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: cached, PageSize: fl.pageSize, Logger: log})
		if err != nil {
			return usageError("%v", err)
		}
		source = func(set *scanner.PolicySet) scanner.Source {
			for _, p := range set.Wildcard {
				log.Warn("policy matches kind *: a cluster scan lists only the kinds named in policies", "policy", p)
			}
			cached.Invalidate() // CRDs may have come or gone
			return cluster.Source(set.Kinds())
		}
		if fl.generate {
			mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
			// The generate and mutateExisting rules that fail give
			// Kyverno's PolicyError events on their policy.
			em, err := fl.events.emitter(cfg, log, reg)
			if err != nil {
				return err
			}
			defer runEmitter(em, log, 10*time.Second)()
			gopts := scanner.GeneratorOptions{Logger: log, Failed: func(f scanner.Failure) {
				source := kubeevents.GeneratePolicyController
				if f.Mutate {
					source = kubeevents.MutateExistingController
				}
				em.Add(kubeevents.BackgroundFailed(f.Err.Error(), f.PolicyKind, f.PolicyNamespace, f.PolicyName, f.Rule, source,
					corev1.ObjectReference{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name}))
			}}
			if opts.Generator, err = scanner.NewGenerator(dyn, mapper, gopts); err != nil {
				return usageError("%v", err)
			}
		}
	}

	var printer *printSink
	if fl.reportWriter != "" {
		var pubReg prometheus.Registerer
		if reg != nil {
			pubReg = reg
		}
		wopts := copts
		if fl.writerConn.set() {
			wopts, err = fl.writerConn.clientOptions(fl.reportWriter)
		} else {
			err = checkWriterToken(fl.reportWriter, copts)
		}
		if err != nil {
			return usageError("%v", err)
		}
		optsFor := func(addr string) (client.Options, error) {
			o := wopts
			o.AllowInsecureToken = loopback(addr) // a token without TLS is refused above otherwise
			return o, nil
		}
		pub, closeConns, err := dialReportWriters(fl.reportWriter, fl.reportShards, optsFor, publish.Options{Logger: log, Registerer: pubReg})
		if err != nil {
			return usageError("%v", err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := pub.Close(ctx); err != nil {
				log.Error("report writer: results not delivered", "error", err)
			}
			closeConns()
		}()
		opts.Sink = scanner.ReportSink(pub)
	} else {
		printer = &printSink{format: fl.output}
		defer printer.Close()
		opts.Sink = printer
	}

	c, err := client.Dial(fl.conn.server, copts)
	if err != nil {
		return usageError("%v", err)
	}
	defer c.Close()
	s, err := scanner.New(c, opts)
	if err != nil {
		return usageError("%v", err)
	}

	var (
		total  scanner.Counts
		failed int
	)
	runOpts := scanner.RunOptions{
		Interval:   fl.interval,
		PolicyPoll: fl.policyPoll,
		Scanned: func(sum scanner.Summary, rescanned []string, err error) {
			total = sum.Counts
			failed = sum.Failed
			if err != nil {
				return
			}
			if printer != nil {
				if werr := printer.print(stdout, scanHeader(sum, rescanned), sum); werr != nil {
					log.Error("write results", "error", werr)
				}
				return
			}
			fmt.Fprintf(stderr, "scanned %d resources of shard %s in %s: %s\n", sum.Resources, sum.Shard, sum.Duration.Round(time.Millisecond), sum.Counts)
		},
	}
	if fl.watch {
		err = s.Watch(ctx, cluster, scanner.WatchOptions{
			Delay:      fl.watchDelay,
			MaxBatch:   fl.watchBatch,
			Interval:   fl.interval,
			PolicyPoll: fl.policyPoll,
			Scanned:    runOpts.Scanned,
			Round: func(sum scanner.Summary, err error) {
				if err != nil {
					return // logged by the scanner
				}
				if printer != nil {
					if werr := printer.print(stdout, roundHeader(sum), sum); werr != nil {
						log.Error("write results", "error", werr)
					}
					return
				}
				fmt.Fprintf(stderr, "watch: evaluated %d changed resource(s), %d deleted: %s\n", sum.Resources, sum.Deleted, sum.Counts)
			},
		})
	} else {
		err = s.Run(ctx, source, runOpts)
	}
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("scan on %s: %s", fl.conn.server, describe(err))}
	}
	switch {
	case failed > 0:
		return &exitError{code: exitUsage, msg: fmt.Sprintf("exit as %d resource(s) could not be evaluated", failed)}
	case fl.failOnViolation && total.Fail > 0:
		return &exitError{code: 1, msg: fmt.Sprintf("exit as %d rule(s) failed", total.Fail)}
	}
	return nil
}

// Defaults of --kube-qps and --kube-burst, Kyverno's (clientRateLimitQPS,
// clientRateLimitBurst).
const (
	defaultKubeQPS   = 100
	defaultKubeBurst = 200
)

// kubeRateFlags are the client-side rate limit of the Kubernetes API
// requests of a command.
type kubeRateFlags struct {
	qps   float64
	burst int
}

func (k *kubeRateFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&k.qps, "kube-qps", defaultKubeQPS, "with --kubeconfig or --in-cluster, the most Kubernetes API requests per second (client-side rate limit)")
	fs.IntVar(&k.burst, "kube-burst", defaultKubeBurst, "with --kubeconfig or --in-cluster, the most Kubernetes API requests in a burst above --kube-qps")
}

// apply sets the rate limit of cfg.
// load is kubeconfig.Load of the cluster named (kubeconfig file and
// context, or inCluster) as agent, at the rate of k.
func (k *kubeRateFlags) load(kubeconfigFile, kubeContext string, inCluster bool, agent string) (*rest.Config, error) {
	cfg, err := kubeconfig.Load(kubeconfigFile, kubeContext, inCluster, agent)
	if err != nil {
		return nil, err
	}
	if err := k.apply(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// kubeClients returns the dynamic and the discovery client of cfg.
func kubeClients(cfg *rest.Config) (*dynamic.DynamicClient, *discovery.DiscoveryClient, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes discovery client: %w", err)
	}
	return dyn, disc, nil
}

// countKubeRequests registers the Kubernetes client metrics (at most
// maxSeries series) in reg and counts the requests of cfg's clients there.
func countKubeRequests(cfg *rest.Config, reg prometheus.Registerer, maxSeries int) error {
	queries, err := kubemetrics.New(reg, maxSeries)
	if err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	queries.Wrap(cfg)
	return nil
}

func (k *kubeRateFlags) apply(cfg *rest.Config) error {
	if k.qps <= 0 || k.burst <= 0 {
		return fmt.Errorf("--kube-qps and --kube-burst must be positive")
	}
	cfg.QPS, cfg.Burst = float32(k.qps), k.burst
	return nil
}
