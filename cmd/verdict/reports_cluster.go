package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/verdict-policy/verdict/internal/kubeconfig"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
	"github.com/verdict-policy/verdict/reportwriter/kubestore"
	"github.com/verdict-policy/verdict/scanner"
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
	kube                    kubeRateFlags
}

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
	c.kube.register(fs)
}

func (c *reportsClusterFlags) enabled() bool { return c.kubeconfig != "" || c.inCluster }

// checkUnused refuses the cluster flags without a cluster.
func (c *reportsClusterFlags) checkUnused(cmd *cobra.Command) error {
	for _, name := range []string{"context", "shard", "lease-namespace", "lease-name", "identity", "lease-duration", "renew-deadline", "retry-period", "flush-interval", "max-report-bytes", "apply-concurrency", "kube-qps", "kube-burst"} {
		if cmd.Flags().Changed(name) {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--%s needs --kubeconfig or --in-cluster", name)}
		}
	}
	return nil
}

// writerGate serves the ReportService of the writer while this replica
// leads the shard, and UNAVAILABLE otherwise, so that publishers retry
// (on the leader, once the standby is out of the Service's endpoints).
type writerGate struct {
	verdictv1.UnimplementedReportServiceServer
	shard string
	w     atomic.Pointer[reportwriter.Writer]
}

func (g *writerGate) writer() (*reportwriter.Writer, error) {
	if w := g.w.Load(); w != nil {
		return w, nil
	}
	return nil, status.Errorf(codes.Unavailable, "not the leader of report shard %s", g.shard)
}

func (g *writerGate) Publish(st verdictv1.ReportService_PublishServer) error {
	w, err := g.writer()
	if err != nil {
		return err
	}
	return w.Publish(st)
}

func (g *writerGate) ListReports(ctx context.Context, req *verdictv1.ListReportsRequest) (*verdictv1.ListReportsResponse, error) {
	w, err := g.writer()
	if err != nil {
		return nil, err
	}
	return w.ListReports(ctx, req)
}

func (g *writerGate) GetReport(ctx context.Context, req *verdictv1.GetReportRequest) (*verdictv1.GetReportResponse, error) {
	w, err := g.writer()
	if err != nil {
		return nil, err
	}
	return w.GetReport(ctx, req)
}

// leaderState is what a replica runs while it leads its shard.
type leaderState struct {
	mu     sync.Mutex
	writer *reportwriter.Writer
	store  *kubestore.Store
	err    error
}

// reportsServeCluster runs the writer of one shard with the Kubernetes
// store, while it holds the shard's Lease.
func reportsServeCluster(cmd *cobra.Command, f reportsServeFlags, log *slog.Logger) error {
	c := f.cluster
	shard, err := scanner.ParseShard(c.shard)
	if err != nil || shard.Count == 0 {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--shard %q: want i/n, such as 0/1 (%v)", c.shard, err)}
	}
	shardName := fmt.Sprintf("%d/%d", shard.Index, shard.Count)
	cfg, err := kubeconfig.Load(c.kubeconfig, c.kubeContext, c.inCluster, "verdict-reports")
	if err == nil {
		err = c.kube.apply(cfg)
	}
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	leaseNS := c.leaseNamespace
	if leaseNS == "" {
		leaseNS = "default"
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && c.inCluster {
			leaseNS = strings.TrimSpace(string(b))
		}
	}
	leaseName := c.leaseName
	if leaseName == "" {
		leaseName = fmt.Sprintf("verdict-reports-%d-of-%d", shard.Index, shard.Count)
	}
	id := c.identity
	if id == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		id = host + "_" + hex.EncodeToString(b[:])
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	sopts, err := f.serverOptions(log)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--listen: %v", err)}
	}
	gate := &writerGate{shard: shardName}
	srv := grpc.NewServer(sopts...)
	verdictv1.RegisterReportServiceServer(srv, gate)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	setServing := func(on bool) {
		st := healthpb.HealthCheckResponse_NOT_SERVING
		if on {
			st = healthpb.HealthCheckResponse_SERVING
		}
		hs.SetServingStatus("", st)
		hs.SetServingStatus(reportwriter.ServiceName, st)
	}
	setServing(false)
	hs.SetServingStatus(livenessService, healthpb.HealthCheckResponse_SERVING)
	reflection.Register(srv)
	if f.metricsListen != "" {
		stopMetrics, err := serveMetrics(f.metricsListen, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), log)
		if err != nil {
			lis.Close()
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--metrics-listen: %v", err)}
		}
		defer stopMetrics()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()

	var leader leaderState
	lost := make(chan struct{})
	var stopping atomic.Bool
	leCtx, leCancel := context.WithCancel(context.Background())
	defer leCancel()
	start := func(ctx context.Context) {
		leader.mu.Lock()
		defer leader.mu.Unlock()
		if stopping.Load() {
			return
		}
		log.Info("leading report shard", "shard", shardName, "lease", leaseNS+"/"+leaseName, "identity", id)
		local, err := boltstore.Open(f.store, f.storeOptions())
		if err != nil {
			leader.err = fmt.Errorf("--store: %w", err)
			leCancel()
			return
		}
		ks, err := kubestore.Open(kubestore.Options{
			Local: local, Client: dyn, ShardIndex: uint32(shard.Index), ShardCount: uint32(shard.Count),
			FlushInterval: c.flushInterval, MaxReportBytes: c.maxReportBytes, Concurrency: c.applyConcurrency,
			TombstoneNamespace: leaseNS, TombstoneName: leaseName + "-tombstones",
			Logger: log, Registry: reg,
		})
		if err != nil {
			local.Close()
			leader.err = err
			leCancel()
			return
		}
		w, err := reportwriter.New(f.writerOptions(ks, log, reg))
		if err != nil {
			ks.Close()
			leader.err = err
			leCancel()
			return
		}
		leader.writer, leader.store = w, ks
		gate.w.Store(w)
		setServing(true)
		log.Info("report writer serving", "shard", shardName, "reports", len(w.Reports("", "")))
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: leaseNS, Name: leaseName},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   c.leaseDuration,
		RenewDeadline:   c.renewDeadline,
		RetryPeriod:     c.retryPeriod,
		ReleaseOnCancel: true,
		Name:            leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: start,
			OnStoppedLeading: func() { close(lost) },
		},
	})
	if err != nil {
		srv.Stop()
		return &exitError{code: exitUsage, msg: fmt.Sprintf("lease: %v", err)}
	}
	leDone := make(chan struct{})
	go func() { defer close(leDone); le.Run(leCtx) }()
	log.Info("report writer waiting for its shard's lease", "shard", shardName, "lease", leaseNS+"/"+leaseName, "identity", id, "address", lis.Addr().String())
	fmt.Fprintf(cmd.OutOrStdout(), "Verdict report writer on %s, shard %s, lease %s/%s (Ctrl-C to stop).\n", lis.Addr(), shardName, leaseNS, leaseName)

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case <-lost:
		// Another replica may lead now: stop without writing anything.
		stopping.Store(true)
		gate.w.Store(nil)
		setServing(false)
		srv.Stop()
		leader.mu.Lock()
		defer leader.mu.Unlock()
		if leader.err != nil {
			return leader.err
		}
		return errors.New("lost the lease of report shard " + shardName)
	}
	// Stop serving, write what the writer holds while still leading, then
	// give the Lease up.
	stopping.Store(true)
	setServing(false)
	leader.mu.Lock()
	w, ks := leader.writer, leader.store
	leader.mu.Unlock()
	if w != nil {
		w.Drain()
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(f.shutdownTimeout):
		srv.Stop()
	}
	gate.w.Store(nil)
	cctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if w != nil {
		if cerr := w.Close(cctx); cerr != nil && err == nil {
			err = cerr
		}
		if cerr := ks.CloseContext(cctx); cerr != nil && err == nil {
			err = cerr
		}
	}
	leCancel()
	<-leDone
	return err
}
