package main

import (
	"context"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/internal/kubeevents"
	"github.com/verdict-policy/verdict/internal/kubemetrics"
	"github.com/verdict-policy/verdict/internal/shard"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
	"github.com/verdict-policy/verdict/reportwriter/leader"
)

// LivenessService is the health service name a standby also answers
// SERVING for: probe liveness with it, readiness with "" (leader only).
const livenessService = "liveness"

// reportsClusterFlags are the flags of verdict reports serve in a cluster.
type reportsClusterFlags struct {
	kubeconfig, kubeContext string
	inCluster               bool
	shard                   string
	leaseNamespace          string
	leaseName, identity     string
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	flushInterval           time.Duration
	maxReportBytes          int
	applyConcurrency        int
	openReports             bool
	kube                    kubeRateFlags
	events                  eventsFlags
}

// eventsFlags are the flags of the Kubernetes Events the leader emits.
type eventsFlags struct {
	omit        []string
	maxQueued   int
	objectBurst int
	objectQPS   float64
	kubeQPS     float64
	kubeBurst   int
}

func (e *eventsFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&e.omit, "omit-events", kubeevents.DefaultOmit, "with --kubeconfig or --in-cluster, the reasons of the Kubernetes Events not emitted, as Kyverno's --omitEvents: PolicyViolation, PolicyApplied, PolicyError, PolicySkipped (\"\" emits every one; all four emit none)")
	fs.IntVar(&e.maxQueued, "max-queued-events", kubeevents.DefaultMaxQueued, "with --kubeconfig or --in-cluster, the most Kubernetes Events waiting to be written; more are dropped (verdict_events_dropped_total)")
	fs.IntVar(&e.objectBurst, "events-object-burst", kubeevents.DefaultBurst, "with --kubeconfig or --in-cluster, the Kubernetes Events one source may emit on one object at once (client-go's spam filter)")
	fs.Float64Var(&e.objectQPS, "events-object-qps", kubeevents.DefaultQPS, "with --kubeconfig or --in-cluster, the Kubernetes Events per second one source may emit on one object after the burst (client-go's spam filter)")
	fs.Float64Var(&e.kubeQPS, "events-kube-qps", 1000, "with --kubeconfig or --in-cluster, the requests per second of the client that writes Kubernetes Events (its own, as Kyverno's --eventsRateLimitQPS)")
	fs.IntVar(&e.kubeBurst, "events-kube-burst", 2000, "with --kubeconfig or --in-cluster, the burst of the client that writes Kubernetes Events (Kyverno's --eventsRateLimitBurst)")
}

var eventsFlagNames = []string{"omit-events", "max-queued-events", "events-object-burst", "events-object-qps", "events-kube-qps", "events-kube-burst"}

func (c *reportsClusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "write the final reports as PolicyReport objects to the cluster of this kubeconfig file (--store keeps the rest)")
	fs.StringVar(&c.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	fs.BoolVar(&c.inCluster, "in-cluster", false, "write the final reports as PolicyReport objects to the cluster the writer runs in (its service account)")
	fs.StringVar(&c.shard, "shard", "0/1", "with --kubeconfig or --in-cluster, the shard i/n of namespaces this writer owns (FNV-1a hash of the namespace modulo n; cluster-scoped reports belong to the shard of \"\")")
	fs.StringVar(&c.leaseNamespace, "lease-namespace", "", "namespace of the shard's Lease (default: the pod's namespace in a cluster, else default)")
	fs.StringVar(&c.leaseName, "lease-name", "", "name of the shard's Lease (default verdict-reports-I-of-N)")
	fs.StringVar(&c.identity, "identity", "", "holder identity in the Lease (default: host name and a random suffix)")
	fs.DurationVar(&c.leaseDuration, "lease-duration", 15*time.Second, "how long a standby waits after the last renewal before it takes the Lease")
	fs.DurationVar(&c.renewDeadline, "renew-deadline", 10*time.Second, "how long the leader retries renewing before it gives the shard up")
	fs.DurationVar(&c.retryPeriod, "retry-period", 2*time.Second, "how often Lease acquisition and renewal are tried")
	fs.DurationVar(&c.flushInterval, "flush-interval", kubestore.DefaultFlushInterval, "with --kubeconfig or --in-cluster, the least time between two writes of one report to the API server (writes within it are coalesced)")
	fs.IntVar(&c.applyConcurrency, "apply-concurrency", kubestore.DefaultConcurrency, "with --kubeconfig or --in-cluster, the most reports written to the API server at once")
	fs.IntVar(&c.maxReportBytes, "max-report-bytes", kubestore.DefaultMaxReportBytes, "with --kubeconfig or --in-cluster, reports larger than this are split into NAME, NAME-2, ...")
	fs.BoolVar(&c.openReports, "openreports-enabled", false, "with --kubeconfig or --in-cluster, write openreports.io/v1alpha1 Report and ClusterReport objects instead of wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport ones (Kyverno's --openreportsEnabled); the writer's objects of the other group are deleted at start")
	fs.BoolVar(&c.openReports, "openreportsEnabled", false, "Kyverno's name of --openreports-enabled")
	_ = fs.MarkHidden("openreportsEnabled")
	c.kube.register(fs)
	c.events.register(fs)
}

func (c *reportsClusterFlags) enabled() bool { return c.kubeconfig != "" || c.inCluster }

// checkUnused refuses the cluster flags without a cluster.
func (c *reportsClusterFlags) checkUnused(cmd *cobra.Command) error {
	for _, name := range append([]string{"context", "shard", "lease-namespace", "lease-name", "identity", "lease-duration", "renew-deadline", "retry-period", "flush-interval", "max-report-bytes", "apply-concurrency", "openreports-enabled", "openreportsEnabled", "kube-qps", "kube-burst"}, eventsFlagNames...) {
		if cmd.Flags().Changed(name) {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--%s needs --kubeconfig or --in-cluster", name)}
		}
	}
	return nil
}

// reportsServeCluster runs the writer of one shard with the Kubernetes
// store, while it holds the shard's Lease (reportwriter/leader).
func reportsServeCluster(cmd *cobra.Command, f reportsServeFlags, log *slog.Logger) error {
	c := f.cluster
	sh, err := shard.Parse(c.shard)
	if err != nil || sh.Count == 0 {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--shard %q: want i/n, such as 0/1 (%v)", c.shard, err)}
	}
	if _, err := kubeevents.ParseOmit(c.events.omit); err != nil {
		return &exitError{code: exitUsage, msg: "--omit-events " + err.Error()}
	}
	cfg, err := c.kube.load(c.kubeconfig, c.kubeContext, c.inCluster, "verdict-reports")
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	reg := newMetricsRegistry()
	if err := countKubeRequests(cfg, reg, kubemetrics.DefaultMaxSeries); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	emitter, err := c.events.emitter(cfg, log, reg)
	if err != nil {
		return err
	}
	srv, err := f.newServer(log, reg)
	if err != nil {
		return err
	}
	setServing := func(on bool) {
		st := healthpb.HealthCheckResponse_NOT_SERVING
		if on {
			st = healthpb.HealthCheckResponse_SERVING
		}
		srv.health.SetServingStatus("", st)
		srv.health.SetServingStatus(reportwriter.ServiceName, st)
	}
	setServing(false)
	srv.health.SetServingStatus(livenessService, healthpb.HealthCheckResponse_SERVING)
	var replica *leader.Replica
	replica, err = leader.New(leader.Options{
		Client: cs, Shard: sh, InCluster: c.inCluster,
		LeaseNamespace: c.leaseNamespace, LeaseName: c.leaseName, Identity: c.identity,
		LeaseDuration: c.leaseDuration, RenewDeadline: c.renewDeadline, RetryPeriod: c.retryPeriod,
		Serving: setServing,
		Logger:  log,
		Open: func() (*reportwriter.Writer, func(context.Context) error, error) {
			local, err := boltstore.Open(f.store, f.storeOptions())
			if err != nil {
				return nil, nil, fmt.Errorf("--store: %w", err)
			}
			ns, name, _ := replica.Lease()
			ks, err := kubestore.Open(kubestore.Options{
				Local: local, Client: dyn, ShardIndex: uint32(sh.Index), ShardCount: uint32(sh.Count),
				FlushInterval: c.flushInterval, MaxReportBytes: c.maxReportBytes, Concurrency: c.applyConcurrency,
				OpenReports:        c.openReports,
				TombstoneNamespace: ns, TombstoneName: name + "-tombstones",
				Logger: log, Registry: reg,
			})
			if err != nil {
				local.Close()
				return nil, nil, err
			}
			wo := f.writerOptions(ks, log, reg)
			wo.Events = emitter
			w, err := reportwriter.New(wo)
			if err != nil {
				ks.Close()
				return nil, nil, err
			}
			return w, ks.CloseContext, nil
		},
	})
	if err != nil {
		srv.lis.Close()
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	verdictv1.RegisterReportServiceServer(srv.grpc, replica.ReportService())
	stopMetrics, err := srv.start(f.metricsListen, reg, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ns, name, id := replica.Lease()
	log.Info("report writer waiting for its shard's lease", "shard", sh.String(), "lease", ns+"/"+name, "identity", id, "address", srv.lis.Addr().String())
	fmt.Fprintf(cmd.OutOrStdout(), "Verdict report writer on %s, shard %s, lease %s/%s (Ctrl-C to stop).\n", srv.lis.Addr(), sh, ns, name)
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	// The events of the last batches are flushed on the way out.
	defer runEmitter(emitter, log, 5*time.Second)()
	// A failed gRPC server stops the replica too.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var serveErr error
	served := make(chan struct{})
	go func() { serveErr = <-srv.serveErr; close(served); cancel() }()
	err = replica.Run(rctx, srv.grpc, f.shutdownTimeout)
	<-served
	if err == nil {
		err = serveErr
	}
	return err
}

// emitter is the Kubernetes Events emitter of the writer, on a client of
// its own (--events-kube-qps, --events-kube-burst) so that events never
// hold the reports' writes.
// runEmitter runs em in the background until the returned function is
// called; that function flushes what em still holds (waiting at most
// flushTimeout, a failure logged), then stops it.
func runEmitter(em *kubeevents.Emitter, log *slog.Logger, flushTimeout time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); em.Run(ctx) }()
	return func() {
		fctx, fcancel := context.WithTimeout(context.Background(), flushTimeout)
		defer fcancel()
		if err := em.Flush(fctx); err != nil {
			log.Warn("events", "error", err)
		}
		cancel()
		<-done
	}
}

func (e *eventsFlags) emitter(cfg *rest.Config, log *slog.Logger, reg *prometheus.Registry) (*kubeevents.Emitter, error) {
	omit, err := kubeevents.ParseOmit(e.omit)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: "--omit-events " + err.Error()}
	}
	ecfg := rest.CopyConfig(cfg)
	ecfg.QPS, ecfg.Burst = float32(e.kubeQPS), e.kubeBurst
	ecfg.RateLimiter = nil
	cs, err := kubernetes.NewForConfig(ecfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: err.Error()}
	}
	em, err := kubeevents.New(kubeevents.Options{
		Client: cs, Omit: omit, MaxQueued: e.maxQueued,
		Burst: e.objectBurst, QPS: e.objectQPS,
		Logger: log, Registry: reg,
	})
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: err.Error()}
	}
	return em, nil
}
