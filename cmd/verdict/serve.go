package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/internal/grpcauth"
	"github.com/verdict-policy/verdict/internal/kubemetrics"
	"github.com/verdict-policy/verdict/server"
)

// serveFlags are the flags of `verdict serve` and `verdict run`.
type serveFlags struct {
	policies      string
	listen        string
	metricsListen string
	pollInterval  time.Duration

	auth serverAuthFlags

	maxMessageBytes      int
	callTimeout          time.Duration
	maxConcurrentStreams uint32
	maxBatchSize         int
	maxEvaluations       int
	cacheSize            int
	inlineCacheBytes     int64
	maxPolicyBytes       int
	maxPolicyRules       int
	maxEvaluationSteps   int64
	metricsMaxSeries     int
	metricsNamespaces    server.NamespaceFilter
	noKyvernoResults     bool
	shutdownTimeout      time.Duration
	drainDelay           time.Duration
	maxConnectionAge     time.Duration

	logLevel  string
	logFormat string
	gcPercent int

	verifyImages bool
	verifyInline bool
	celData      celDataFlags
	trace        traceFlags

	kube *kubeFlags // serve only: the Kubernetes policy source

	reports reportFlags // the report writer (reports_wire.go)
}

func (f *serveFlags) register(fs *pflag.FlagSet, policies, listen, metricsListen string) {
	fs.StringVar(&f.policies, "policies", policies, "folder of ClusterPolicy / Policy YAML files, reloaded on change")
	fs.StringVar(&f.listen, "listen", listen, "gRPC listen address, HOST:PORT")
	fs.StringVar(&f.metricsListen, "metrics-listen", metricsListen, "Prometheus /metrics listen address, HOST:PORT (empty: no metrics endpoint)")
	fs.DurationVar(&f.pollInterval, "poll-interval", server.DefaultPollInterval, "how often the policy folder is checked for changes")
	f.auth.register(fs)
	fs.IntVar(&f.maxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, "largest request message the server accepts")
	fs.DurationVar(&f.callTimeout, "call-timeout", server.DefaultCallTimeout, "deadline of each call and of each stream batch")
	fs.Uint32Var(&f.maxConcurrentStreams, "max-concurrent-streams", server.DefaultMaxConcurrentStreams, "calls in flight per client connection")
	fs.IntVar(&f.maxBatchSize, "max-batch-size", server.DefaultMaxBatchSize, "requests per EvaluateStream batch")
	fs.IntVar(&f.maxEvaluations, "max-evaluations", 0, "evaluations running at once, others wait in line (0: GOMAXPROCS; negative: no limit)")
	fs.IntVar(&f.cacheSize, "cache-size", server.DefaultCacheSize, "compiled policy documents kept in each LRU cache (the sources' policies; inline policies)")
	fs.Int64Var(&f.inlineCacheBytes, "inline-cache-bytes", server.DefaultInlineCacheBytes, "memory kept for compiled inline policies (least recently used evicted past it; a policy that alone takes more is refused)")
	fs.IntVar(&f.maxPolicyBytes, "max-request-policy-bytes", server.DefaultMaxRequestPolicyBytes, "bytes of policy documents one request may have compiled: the inline policies of an evaluation, each ValidatePolicies document")
	fs.Int64Var(&f.maxEvaluationSteps, "max-evaluation-steps", eval.DefaultMaxSteps, "work of one evaluation in engine steps (a foreach element, a resource node a pattern visits, ...); past it the rule reports an error (negative: no limit; --call-timeout still applies)")
	fs.IntVar(&f.maxPolicyRules, "max-request-policy-rules", server.DefaultMaxRequestPolicyRules, "rules (before autogen) one request may have compiled: in the inline policies of an evaluation, in each policy given to ValidatePolicies")
	fs.IntVar(&f.metricsMaxSeries, "metrics-max-series", server.DefaultMetricsMaxSeries, "series of verdict_policy_results_total (and of Kyverno's result metrics) with labels from requests (namespace, kind, inline policy and rule names), and of kyverno_client_queries_total; past it, they are counted under \""+server.OverflowLabel+"\"")
	fs.StringSliceVar(&f.metricsNamespaces.Include, "metrics-namespaces-include", nil, "count policy results (verdict_* and kyverno_*) only for resources in these namespaces (as Kyverno's metricsConfig; default: all)")
	fs.BoolVar(&f.noKyvernoResults, "no-kyverno-result-metrics", false, "leave out Kyverno's result metrics (kyverno_policy_results_total, kyverno_policy_execution_duration_seconds, those of the policies.kyverno.io kinds): about 5 KB of the 7 KB of each series of --metrics-max-series")
	fs.StringSliceVar(&f.metricsNamespaces.Exclude, "metrics-namespaces-exclude", nil, "never count policy results for resources in these namespaces (wins over --metrics-namespaces-include)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long calls in flight may run after a stop signal")
	fs.DurationVar(&f.drainDelay, "drain-delay", 0, "time between reporting NOT_SERVING and refusing new calls at shutdown")
	fs.DurationVar(&f.maxConnectionAge, "max-connection-age", server.DefaultMaxConnectionAge, "close client connections after this age so that clients spread over new replicas (negative: never)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	registerGCFlag(fs, &f.gcPercent, defaultGCPercent)
	f.trace.register(fs)
	fs.BoolVar(&f.verifyImages, "verify-images", true, "check image signatures of verifyImages rules against their registries (Docker config credentials); false: those rules report an error")
	fs.BoolVar(&f.verifyInline, "verify-images-inline-policies", false, "let inline ImageValidatingPolicies of Evaluate calls reach registries (any caller of the server could then make it contact the registries of its images)")
	f.celData.register(fs)
}

// options turns the flags into server options.
func (f *serveFlags) options(stderr io.Writer) (server.Options, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return server.Options{}, fmt.Errorf("--log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	switch f.logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, hopts)
	case "json":
		handler = slog.NewJSONHandler(stderr, hopts)
	default:
		return server.Options{}, fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	}
	reg := newMetricsRegistry()
	opts := server.Options{
		Logger:               slog.New(handler),
		Registry:             reg,
		CacheSize:            f.cacheSize,
		MaxMessageBytes:      f.maxMessageBytes,
		CallTimeout:          f.callTimeout,
		MaxConcurrentStreams: f.maxConcurrentStreams,
		MaxBatchSize:         f.maxBatchSize,
		MaxEvaluations:       f.maxEvaluations,
		ShutdownTimeout:      f.shutdownTimeout,
		DrainDelay:           f.drainDelay,
		MaxConnectionAge:     f.maxConnectionAge,
	}
	// What a client can make the server hold.
	opts.InlineCacheBytes = f.inlineCacheBytes
	opts.MaxRequestPolicyBytes, opts.MaxRequestPolicyRules = f.maxPolicyBytes, f.maxPolicyRules
	opts.MaxEvaluationSteps = f.maxEvaluationSteps
	opts.MetricsMaxSeries, opts.MetricsNamespaces = f.metricsMaxSeries, f.metricsNamespaces
	opts.NoKyvernoResultMetrics = f.noKyvernoResults
	if f.verifyImages {
		opts.ImageVerifier = newImageVerifier()
	}
	opts.ImageVerifyInlinePolicies = f.verifyInline
	if f.policies != "" {
		opts.Sources = append(opts.Sources, &server.FolderSource{Dir: f.policies, Interval: f.pollInterval})
	}
	queries, err := kubemetrics.New(reg, f.metricsMaxSeries)
	if err != nil {
		return server.Options{}, fmt.Errorf("register metrics: %w", err)
	}
	if src, err := f.kube.source(opts.Logger, queries); err != nil {
		return server.Options{}, err
	} else if src != nil {
		opts.Sources = append(opts.Sources, src)
	}
	if l, err := f.kube.lookup(opts.Logger, queries); err != nil {
		return server.Options{}, err
	} else if l != nil {
		opts.Lookup = l
		opts.CELData = l.CELSources()
	}
	if err := f.celData.apply(&opts); err != nil {
		return server.Options{}, err
	}
	if opts.TLS, err = f.auth.tlsConfig(); err != nil {
		return server.Options{}, err
	}
	if opts.BearerTokens, err = f.auth.tokens(); err != nil {
		return server.Options{}, err
	}
	return opts, nil
}

// serverAuthFlags are the TLS and bearer token flags of a gRPC server
// (verdict serve and run, verdict reports serve).
type serverAuthFlags struct {
	tlsCert, tlsKey, clientCA string
	tokenFile                 string
}

func (a *serverAuthFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.tlsCert, "tls-cert", "", "serve TLS with this certificate (PEM); needs --tls-key")
	fs.StringVar(&a.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	fs.StringVar(&a.clientCA, "client-ca", "", "require client certificates signed by these CAs (PEM; mTLS); needs --tls-cert")
	fs.StringVar(&a.tokenFile, "token-file", "", "accept only calls with one of these bearer tokens (one per line; health checks exempt)")
}

// tlsConfig is the server TLS of the flags (internal/grpcauth), nil
// without --tls-cert, --tls-key and --client-ca.
func (a *serverAuthFlags) tlsConfig() (*tls.Config, error) {
	if a.tlsCert == "" && a.tlsKey == "" && a.clientCA == "" {
		return nil, nil
	}
	return grpcauth.ServerTLS(a.tlsCert, a.tlsKey, a.clientCA)
}

// tokens are the tokens of --token-file, nil without it.
func (a *serverAuthFlags) tokens() ([]string, error) {
	if a.tokenFile == "" {
		return nil, nil
	}
	return readTokens(a.tokenFile)
}

// readTokens reads one bearer token per line; blank lines and lines
// starting with # are skipped.
func readTokens(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tokens = append(tokens, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("--token-file %s: no token", path)
	}
	return tokens, nil
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --policies DIR --listen HOST:PORT",
		Short: "Run the gRPC decision server",
		Long: `Run the gRPC decision server (verdict.v1.DecisionService) with the
policies of --policies, reloaded when the folder changes. Health
(grpc.health.v1) reports SERVING once the policies are loaded; on SIGTERM or
Ctrl-C it reports NOT_SERVING, lets calls in flight finish and exits.

It listens on loopback unless told otherwise: --listen :50051 (and
--metrics-listen :9090, which has no authentication) for other hosts. It
warns when bearer tokens would travel in plain text (--token-file without
--tls-cert), and when it serves other hosts with neither TLS nor tokens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd, &f, nil)
		},
	}
	f.register(cmd.Flags(), "", "127.0.0.1:50051", "127.0.0.1:9090")
	f.kube = registerKubeFlags(cmd.Flags())
	f.reports.registerServe(cmd.Flags())
	return cmd
}

func newRunCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run Verdict locally: the decision server on loopback with the example policies",
		Long: `Run Verdict in one process for local use: the gRPC decision server
with the policies of --policies (default examples/policies, reloaded on
change), listening on loopback. It prints how to call it and stops on
Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd, &f, func(w io.Writer, addr string) {
				fmt.Fprintf(w, "Verdict decision server on %s, policies from %s (Ctrl-C to stop).\n\n", addr, f.policies)
				fmt.Fprintf(w, "Call it with:\n")
				fmt.Fprintf(w, "  bin/verdict eval --server %s -f examples/resources\n", addr)
				fmt.Fprintf(w, "  bin/verdict scan --server %s -f examples/resources   # a background scan\n", addr)
				if !f.reports.noReports {
					fmt.Fprintf(w, "  bin/verdict reports get -A --server %s        # PolicyReports, kept in %s\n", addr, f.reports.db)
				}
				fmt.Fprintf(w, "  grpcurl -plaintext %s list verdict.v1.DecisionService\n", addr)
				fmt.Fprintf(w, "  grpcurl -plaintext %s verdict.v1.DecisionService/ListPolicies\n", addr)
			})
		},
	}
	f.register(cmd.Flags(), "examples/policies", "127.0.0.1:50051", "")
	f.reports.registerRun(cmd.Flags())
	return cmd
}

// serve runs the server until the command's context ends or SIGTERM
// arrives. banner, when set, is printed once the server listens.
func serve(cmd *cobra.Command, f *serveFlags, banner func(w io.Writer, addr string)) error {
	opts, err := f.options(cmd.ErrOrStderr())
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if f.policies != "" {
		if fi, err := os.Stat(f.policies); err != nil || !fi.IsDir() {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--policies %s: not a folder", f.policies)}
		}
	}
	applyGCPercent(f.gcPercent)
	tp, stopTracing, err := f.trace.provider(cmd.Context(), "verdict-server")
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 5*time.Second)
		defer cancel()
		stopTracing(ctx)
	}()
	opts.TracerProvider = tp
	reports, err := f.reports.setup(&opts)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer reports.close()
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	if l, ok := opts.Lookup.(interface{ Start(context.Context) }); ok {
		l.Start(ctx) // the cluster lookup's ConfigMap informer
	}
	reports.attach(ctx, srv)
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--listen: %v", err)}
	}
	if f.metricsListen != "" {
		stopMetrics, err := serveMetrics(f.metricsListen, srv.MetricsHandler(), opts.Logger)
		if err != nil {
			lis.Close()
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--metrics-listen: %v", err)}
		}
		defer stopMetrics()
	}
	for _, w := range listenWarnings(lis.Addr(), opts.TLS != nil, len(opts.BearerTokens) > 0) {
		opts.Logger.Warn(w, "address", lis.Addr().String())
	}
	if banner != nil {
		banner(cmd.OutOrStdout(), lis.Addr().String())
	}
	return srv.Run(ctx, lis)
}

// listenWarnings are the warnings about how the server listens on addr:
// tokens over plain text, or other hosts served with neither TLS nor
// tokens.
func listenWarnings(addr net.Addr, tls, tokens bool) []string {
	var out []string
	if tokens && !tls {
		out = append(out, "--token-file without --tls-cert: bearer tokens travel in plain text, readable by anyone on the network path")
	}
	if !tls && !tokens && !isLoopback(addr) {
		out = append(out, "listening beyond loopback with neither TLS nor tokens: anyone who reaches this address can call the decision service (set --tls-cert, --client-ca or --token-file, or --listen 127.0.0.1:PORT)")
	}
	return out
}

// isLoopback reports whether addr accepts connections from this host only.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
