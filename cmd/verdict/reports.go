package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/grpcauth"
	"github.com/verdict-policy/verdict/internal/grpccodec"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

func newReportsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reports",
		Short: "The report writer: serve it, read its PolicyReports",
		Long: `The report writer keeps Kyverno PolicyReports and ClusterPolicyReports
(wgpolicyk8s.io/v1alpha2), one per policy and namespace, from the results
of decision servers (verdict serve --report-writer) and scanners
(verdict scan --report-writer). verdict run serves it on its own address.`,
	}
	cmd.AddCommand(newReportsServeCmd(), newReportsGetCmd())
	return cmd
}

type reportsServeFlags struct {
	listen, metricsListen, store string
	maxMessageBytes              int
	maxBatchItems, maxUnacked    int
	maxFlushItems                int
	maxReportWriteBytes          int
	flushDelay, tombstoneTTL     time.Duration
	shutdownTimeout              time.Duration
	logLevel                     string
	groupResults, perResource    bool
	verifyStore                  bool
	cluster                      reportsClusterFlags

	auth serverAuthFlags

	maxClockSkew                time.Duration
	policySenderTTL             time.Duration
	maxPolicySenders            int
	maxResources, maxTombstones int
	maxInflightBytes            int64
	ackTimeout                  time.Duration
}

func newReportsServeCmd() *cobra.Command {
	var f reportsServeFlags
	cmd := &cobra.Command{
		Use:   "serve --listen HOST:PORT --store FILE [--in-cluster|--kubeconfig FILE --shard i/n]",
		Short: "Run the report writer (verdict.v1.ReportService) on an embedded store",
		Long: `Run the report writer as its own process: the gRPC service
verdict.v1.ReportService (Publish, ListReports, GetReport) with its state in
one bbolt file (--store), kept across restarts. On SIGTERM or Ctrl-C it ends
the Publish streams (senders send again what was not acknowledged) and
writes what it holds. An empty or damaged --store is an error naming the
file, never a crash.

It listens on loopback unless --listen says otherwise. Off loopback, give
it --tls-cert and --tls-key (with --client-ca: mTLS) and --token-file, as
verdict serve; publishers connect with --report-writer-ca-file,
--report-writer-cert-file, --report-writer-key-file and
--report-writer-token-file. Items dated later than the writer's clock plus
--max-clock-skew are rejected.

With --in-cluster or --kubeconfig, the final reports are PolicyReport and
ClusterPolicyReport objects of the cluster (server-side apply, field manager
verdict, at most once per report per --flush-interval), and --store keeps
the rest (intermediary reports, tombstones, policy set). The writer owns
the namespaces of --shard i/n and serves only while it holds the shard's
Lease (--lease-namespace, --lease-name): a standby answers UNAVAILABLE and
reports NOT_SERVING health (the health service "liveness" is SERVING on
every replica), and takes over when the leader stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return reportsServe(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "listen", "127.0.0.1:50052", "gRPC address (HOST:PORT; :50052 for every interface)")
	fs.StringVar(&f.metricsListen, "metrics-listen", "127.0.0.1:9091", "address of the Prometheus /metrics endpoint (empty: none)")
	fs.StringVar(&f.store, "store", "verdict-reports.db", "the bbolt file of the reports (created when missing; an empty or damaged file is an error)")
	fs.BoolVar(&f.verifyStore, "verify-store", false, "at start, read every page of --store and run bbolt's consistency check (a read of the whole file)")
	f.auth.register(fs)
	fs.DurationVar(&f.maxClockSkew, "max-clock-skew", reportwriter.DefaultMaxClockSkew, "reject items whose time is later than the writer's clock plus this")
	fs.DurationVar(&f.policySenderTTL, "policy-sender-ttl", reportwriter.DefaultPolicySenderTTL, "a decision server counts as live this long after its last policy set (the entries of a policy go when no live server lists it)")
	fs.IntVar(&f.maxPolicySenders, "max-policy-senders", reportwriter.DefaultMaxSenders, "most decision servers live at once (their policy sets)")
	fs.IntVar(&f.maxResources, "max-resources", reportwriter.DefaultMaxResources, "most resources the writer holds entries of")
	fs.IntVar(&f.maxTombstones, "max-tombstones", reportwriter.DefaultMaxTombstones, "most deleted resources remembered against late resends")
	fs.IntVar(&f.maxMessageBytes, "max-message-bytes", reportwriter.DefaultMaxMessageBytes, "largest Publish batch in bytes")
	fs.IntVar(&f.maxBatchItems, "max-batch-items", reportwriter.DefaultMaxBatchItems, "most items of one Publish batch")
	fs.IntVar(&f.maxUnacked, "max-unacked", reportwriter.DefaultMaxUnacked, "most unacknowledged batches per Publish stream")
	fs.DurationVar(&f.ackTimeout, "ack-timeout", reportwriter.DefaultAckTimeout, "end a Publish stream whose sender does not take its acknowledgements within this")
	fs.Int64Var(&f.maxInflightBytes, "max-inflight-bytes", reportwriter.DefaultMaxInflightBytes, "most bytes of Publish batches received and not acknowledged, over every stream (a stream waits for room)")
	fs.IntVar(&f.maxFlushItems, "max-flush-items", reportwriter.DefaultMaxFlushItems, "most items written in one store transaction")
	fs.IntVar(&f.maxReportWriteBytes, "max-report-write-bytes", reportwriter.DefaultMaxReportWriteBytes, "bytes of final reports (JSON) written in one store transaction: changed reports are rendered and written a part of this size at a time")
	fs.DurationVar(&f.flushDelay, "flush-delay", 0, "wait for more batches before writing (fewer, larger transactions)")
	fs.DurationVar(&f.tombstoneTTL, "tombstone-ttl", reportwriter.DefaultTombstoneTTL, "how long deleted resources are remembered against late resends")
	fs.BoolVar(&f.groupResults, "group-results", false, "write one results[] entry per outcome of a rule listing its resources (reports about 3 times smaller) instead of one per resource and rule as Kyverno does; Policy Reporter then shows only the first resource of each entry")
	fs.BoolVar(&f.perResource, "results-per-resource", true, "one results[] entry per resource and rule (the default); false is --group-results")
	_ = fs.MarkDeprecated("results-per-resource", "one result per resource is the default; use --group-results for the grouped layout")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long streams may finish after a stop signal")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	f.cluster.register(fs)
	return cmd
}

func reportsServe(cmd *cobra.Command, f reportsServeFlags) error {
	if cmd.Flags().Changed("results-per-resource") {
		if cmd.Flags().Changed("group-results") && f.groupResults == f.perResource {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--results-per-resource=%t contradicts --group-results=%t", f.perResource, f.groupResults)}
		}
		f.groupResults = !f.perResource
	}
	log, err := textLogger(cmd.ErrOrStderr(), f.logLevel)
	if err != nil {
		return err
	}
	if f.cluster.enabled() {
		return reportsServeCluster(cmd, f, log)
	}
	if err := f.cluster.checkUnused(cmd); err != nil {
		return err
	}
	st, err := boltstore.Open(f.store, f.storeOptions())
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--store: %v", err)}
	}
	defer st.Close()
	reg := newMetricsRegistry()
	w, err := reportwriter.New(f.writerOptions(st, log, reg))
	if err != nil {
		return err
	}
	srv, err := f.newServer(log, reg)
	if err != nil {
		return err
	}
	verdictv1.RegisterReportServiceServer(srv.grpc, w)
	stopMetrics, err := srv.start(f.metricsListen, reg, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	log.Info("report writer serving", "address", srv.lis.Addr().String(), "store", f.store, "reports", len(w.Reports("", "")))
	fmt.Fprintf(cmd.OutOrStdout(), "Verdict report writer on %s, store %s (Ctrl-C to stop).\n", srv.lis.Addr(), f.store)
	select {
	case <-ctx.Done():
	case err = <-srv.serveErr:
	}
	srv.health.Shutdown()
	w.Drain()
	stopped := make(chan struct{})
	go func() { srv.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(f.shutdownTimeout):
		srv.grpc.Stop()
	}
	cctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if cerr := w.Close(cctx); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// writerServer is the gRPC server of the report writer: its listener,
// health and reflection.
type writerServer struct {
	lis      net.Listener
	grpc     *grpc.Server
	health   *health.Server
	serveErr chan error
}

// newServer listens on --listen and builds the gRPC server of the flags
// (serverOptions), with health and reflection; register the
// ReportService, then start it.
func (f *reportsServeFlags) newServer(log *slog.Logger, reg *prometheus.Registry) (*writerServer, error) {
	sopts, err := f.serverOptions(log)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: err.Error()}
	}
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--listen: %v", err)}
	}
	s := &writerServer{lis: lis, grpc: grpc.NewServer(sopts...), health: health.NewServer(), serveErr: make(chan error, 1)}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	return s, nil
}

// start serves the metrics of reg on metricsListen (unless empty) and the
// gRPC server; the function returned stops the metrics endpoint.
func (s *writerServer) start(metricsListen string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	stopMetrics := func() {}
	if metricsListen != "" {
		var err error
		if stopMetrics, err = serveMetrics(metricsListen, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}), log); err != nil {
			s.lis.Close()
			return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--metrics-listen: %v", err)}
		}
	}
	go func() { s.serveErr <- s.grpc.Serve(s.lis) }()
	return stopMetrics, nil
}

// storeOptions are the options of the bbolt store.
func (f *reportsServeFlags) storeOptions() boltstore.Options {
	return boltstore.Options{Verify: f.verifyStore}
}

// writerOptions are the writer's options, on store st.
func (f *reportsServeFlags) writerOptions(st reportwriter.Store, log *slog.Logger, reg *prometheus.Registry) reportwriter.Options {
	return reportwriter.Options{
		Store: st, Logger: log, Registry: reg,
		MaxBatchItems: f.maxBatchItems, MaxMessageBytes: f.maxMessageBytes, MaxUnacked: f.maxUnacked,
		MaxFlushItems: f.maxFlushItems, MaxReportWriteBytes: f.maxReportWriteBytes, FlushDelay: f.flushDelay, TombstoneTTL: f.tombstoneTTL,
		GroupResults: f.groupResults,
		MaxClockSkew: f.maxClockSkew, PolicySenderTTL: f.policySenderTTL, MaxPolicySenders: f.maxPolicySenders,
		MaxResources: f.maxResources, MaxTombstones: f.maxTombstones, MaxInflightBytes: f.maxInflightBytes,
		AckTimeout: f.ackTimeout,
	}
}

// serverOptions are the gRPC server's options: the message size limit,
// TLS (--tls-cert, --tls-key, --client-ca) and the bearer tokens
// (--token-file), as verdict serve's (internal/grpcauth).
func (f *reportsServeFlags) serverOptions(log *slog.Logger) ([]grpc.ServerOption, error) {
	// The transport limit leaves room for the writer's own check, which
	// names the limit.
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(f.maxMessageBytes + 64<<10), grpccodec.ServerOption()}
	cfg, err := f.auth.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	list, err := f.auth.tokens()
	if err != nil {
		return nil, err
	}
	if list != nil {
		tokens, err := grpcauth.NewTokens(list)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		opts = append(opts, grpc.ChainUnaryInterceptor(tokens.Unary()), grpc.ChainStreamInterceptor(tokens.Stream()))
		if cfg == nil {
			log.Warn("bearer tokens travel in plain text: anyone on the network path can read them; add --tls-cert and --tls-key")
		}
	}
	return opts, nil
}

type reportsGetFlags struct {
	conn          connFlags
	allNamespaces bool
	namespace     string
	output        string
	timeout       time.Duration
}

func newReportsGetCmd() *cobra.Command {
	var f reportsGetFlags
	cmd := &cobra.Command{
		Use:   "get [polr|cpolr] [NAME] --server HOST:PORT [-A] [-n NS] [-o yaml|json]",
		Short: "Print PolicyReports (polr) or ClusterPolicyReports (cpolr) like kubectl get",
		Long: `Print the final reports of a report writer (verdict run, or verdict
reports serve) like kubectl get polr: NAMESPACE NAME PASS FAIL WARN ERROR
SKIP AGE, one line per report (cpolr: without NAMESPACE). -o yaml or -o json
prints the reports themselves, with their results. Without -A and -n, the
namespace is "default".`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return reportsGet(cmd.Context(), f, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	f.conn.register(fs, "address of the report writer (verdict run's address, or verdict reports serve's)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "PolicyReports of every namespace")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "PolicyReports of this namespace (default \"default\")")
	fs.StringVarP(&f.output, "output", "o", "", "yaml or json: print the reports")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "time limit of the call")
	return cmd
}

// reportKinds maps the kind argument of reports get to a report kind.
var reportKinds = map[string]string{
	"polr": reportwriter.KindPolicyReport, "policyreport": reportwriter.KindPolicyReport, "policyreports": reportwriter.KindPolicyReport,
	"cpolr": reportwriter.KindClusterPolicyReport, "clusterpolicyreport": reportwriter.KindClusterPolicyReport, "clusterpolicyreports": reportwriter.KindClusterPolicyReport,
}

func reportsGet(ctx context.Context, f reportsGetFlags, args []string, stdout, stderr io.Writer) error {
	kind := reportwriter.KindPolicyReport
	if len(args) > 0 {
		k, ok := reportKinds[strings.ToLower(args[0])]
		if !ok {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("reports get %s: want polr or cpolr", args[0])}
		}
		kind = k
	}
	if f.output != "" && f.output != "yaml" && f.output != "json" {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--output %q: want yaml or json", f.output)}
	}
	ns := f.namespace
	switch {
	case kind == reportwriter.KindClusterPolicyReport:
		ns = ""
	case f.allNamespaces:
		ns = ""
	case ns == "":
		ns = "default"
	}
	copts, err := f.conn.clientOptions()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	// A standalone writer (verdict reports serve) reports no health for the
	// decision service, which the client checks by default.
	copts.DisableHealthCheck = true
	c, err := client.Dial(f.conn.server, copts)
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--server %s: %v", f.conn.server, err)}
	}
	defer c.Close()
	api := verdictv1.NewReportServiceClient(c.Conn())
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	var infos []*verdictv1.ReportInfo
	if len(args) == 2 {
		resp, err := api.GetReport(ctx, &verdictv1.GetReportRequest{Kind: kind, Namespace: ns, Name: args[1]})
		if err != nil {
			return callError(f.conn.server, err)
		}
		infos = []*verdictv1.ReportInfo{resp.GetInfo()}
	} else {
		resp, err := api.ListReports(ctx, &verdictv1.ListReportsRequest{Kind: kind, Namespace: ns})
		if err != nil {
			return callError(f.conn.server, err)
		}
		infos = resp.GetReports()
	}
	if f.output != "" {
		return printReports(ctx, api, infos, len(args) == 2, f.output, stdout)
	}
	if len(infos) == 0 {
		if ns == "" {
			fmt.Fprintln(stderr, "No resources found")
		} else {
			fmt.Fprintf(stderr, "No resources found in %s namespace.\n", ns)
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 3, ' ', 0)
	withNS := kind == reportwriter.KindPolicyReport && f.allNamespaces
	if withNS {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tPASS\tFAIL\tWARN\tERROR\tSKIP\tAGE")
	now := time.Now()
	for _, r := range infos {
		if withNS {
			fmt.Fprintf(tw, "%s\t", r.GetNamespace())
		}
		s := r.GetSummary()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.GetName(), s.GetPass(), s.GetFail(), s.GetWarn(), s.GetError(), s.GetSkip(),
			duration.HumanDuration(now.Sub(r.GetCreated().AsTime())))
	}
	return tw.Flush()
}

func callError(server string, err error) error {
	if status.Code(err) == codes.NotFound || status.Code(err) == codes.InvalidArgument {
		return &exitError{code: 1, msg: "Error: " + status.Convert(err).Message()}
	}
	if status.Code(err) == codes.Unimplemented {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("%s serves no report writer (start it with verdict run or verdict reports serve)", server)}
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %v", server, err)}
}

// printReports prints the reports as one object (a name was given) or a
// List, like kubectl get -o.
func printReports(ctx context.Context, api verdictv1.ReportServiceClient, infos []*verdictv1.ReportInfo, one bool, format string, w io.Writer) error {
	items := make([]json.RawMessage, 0, len(infos))
	for _, info := range infos {
		resp, err := api.GetReport(ctx, &verdictv1.GetReportRequest{Kind: info.GetKind(), Namespace: info.GetNamespace(), Name: info.GetName()})
		if err != nil {
			if status.Code(err) == codes.NotFound {
				continue // deleted since the list
			}
			return callError("", err)
		}
		items = append(items, resp.GetReport())
	}
	var doc any = map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{}}
	if one && len(items) == 1 {
		doc = items[0]
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if format == "json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "    "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = w.Write(buf.Bytes())
		return err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
