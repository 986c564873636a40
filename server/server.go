package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/ctxtime"
	"github.com/verdict-policy/verdict/internal/grpcauth"
	"github.com/verdict-policy/verdict/internal/grpccodec"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// ServiceName is the gRPC name of the decision service, also used for its
// health status.
var ServiceName = verdictv1.DecisionService_ServiceDesc.ServiceName

// KeepaliveMinTime is the shortest keepalive ping interval the server
// accepts from a client; a client that pings more often is disconnected.
const KeepaliveMinTime = 10 * time.Second

// Server is the gRPC decision service. Create it with New and run it with
// Run.
type Server struct {
	verdictv1.UnimplementedDecisionServiceServer

	opts    Options
	log     *slog.Logger
	grpc    *grpc.Server
	health  *health.Server
	store   *Store
	engine  *eval.Engine
	metrics *metrics
	// dropLog limits the logs of evaluations dropped for the report
	// writer to one per DropLogInterval.
	dropLog dropLog
	tokens  *grpcauth.Tokens
	// slots limits the evaluations running at once (nil: no limit).
	slots *slots

	// draining is closed when shutdown starts: streams stop after the
	// batch in progress. stopping is closed when the server stops taking
	// calls: health watches end.
	draining     chan struct{}
	stopping     chan struct{}
	shutdownOnce sync.Once
}

// New returns a Server configured by opts. It does not listen yet.
func New(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	m, err := newMetrics(opts.Registry, opts.resultLimits())
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	names := map[string]bool{}
	for _, src := range opts.Sources {
		if names[src.Name()] {
			return nil, fmt.Errorf("two policy sources named %q", src.Name())
		}
		names[src.Name()] = true
	}
	engineOpts := eval.Options{Lookup: opts.Lookup, ImageVerifier: opts.ImageVerifier, MaxSteps: opts.MaxEvaluationSteps, CELData: opts.CELData}
	guard := celGuard{maxCalls: opts.MaxCELDataCalls, httpInline: opts.CELHTTPInlinePolicies, httpNsPol: opts.CELHTTPNamespacedPolicies}
	var sl *slots
	if opts.MaxEvaluations > 0 {
		if sl, err = newSlots(opts.MaxEvaluations, opts.Registry); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
		if opts.Lookup != nil {
			engineOpts.Lookup = slotLookup{opts.Lookup}
		}
		if opts.ImageVerifier != nil {
			engineOpts.ImageVerifier = slotVerifier{opts.ImageVerifier}
		}
		engineOpts.CELData = slotCELData(opts.CELData)
	}
	// The guards refuse before a call waits (and gives up its slot).
	engineOpts.CELData = guard.sources(engineOpts.CELData)
	if engineOpts.ImageVerifier != nil && !opts.ImageVerifyInlinePolicies {
		engineOpts.ImageVerifier = guardedVerifier{engineOpts.ImageVerifier}
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		health:   health.NewServer(),
		engine:   eval.New(engineOpts),
		slots:    sl,
		metrics:  m,
		draining: make(chan struct{}),
		stopping: make(chan struct{}),
	}
	if len(opts.BearerTokens) > 0 {
		if s.tokens, err = grpcauth.NewTokens(opts.BearerTokens); err != nil {
			return nil, err
		}
	}
	s.store = newStore(opts.Sources,
		newCompileCache(opts.CacheSize, 0, nil, m),
		newCompileCache(opts.CacheSize, opts.InlineCacheBytes, newSharedMemory(policy.Shared), m),
		requestLimits{bytes: opts.MaxRequestPolicyBytes, rules: opts.MaxRequestPolicyRules},
		opts.Logger, m)
	if err := opts.Registry.Register(ruleInfoCollector{desc: m.kyverno.ruleInfo, store: s.store.current, counted: m.limits.namespaces.Counted}); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	s.grpc = grpc.NewServer(s.serverOptions()...)
	verdictv1.RegisterDecisionServiceServer(s.grpc, s)
	healthpb.RegisterHealthServer(s.grpc, &healthService{Server: s.health, stop: s.stopping})
	reflection.Register(s.grpc)
	m.grpc.InitializeMetrics(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	return s, nil
}

// serverOptions builds the gRPC server options: limits, TLS, and the
// interceptor chains (outermost first): metrics, logging, panic recovery,
// authentication, request validation, call deadline.
func (s *Server) serverOptions() []grpc.ServerOption {
	o := s.opts
	logger := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		s.log.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	logOpts := []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithLevels(func(c codes.Code) logging.Level {
			if c == codes.OK || c == codes.Canceled {
				return logging.LevelDebug
			}
			return logging.DefaultServerCodeToLevel(c)
		}),
	}
	recoverOpt := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		s.log.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
		return status.Error(codes.Internal, "internal error")
	})
	unary := []grpc.UnaryServerInterceptor{
		s.metrics.grpc.UnaryServerInterceptor(),
		logging.UnaryServerInterceptor(logger, logOpts...),
		recovery.UnaryServerInterceptor(recoverOpt),
	}
	stream := []grpc.StreamServerInterceptor{
		s.metrics.grpc.StreamServerInterceptor(),
		logging.StreamServerInterceptor(logger, logOpts...),
		recovery.StreamServerInterceptor(recoverOpt),
	}
	if s.tokens != nil {
		unary = append(unary, s.tokens.Unary())
		stream = append(stream, s.tokens.Stream())
	}
	unary = append(unary, validateUnary, s.deadlineUnary)
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(o.MaxMessageBytes),
		grpc.MaxConcurrentStreams(o.MaxConcurrentStreams),
		// Reuse handler goroutines: a new goroutine per call grows its
		// stack again for the engine's deep calls (copystack was 10% of
		// CPU in the client benchmarks).
		grpc.NumStreamWorkers(uint32(32 * runtime.GOMAXPROCS(0))),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: KeepaliveMinTime, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		// Protobuf on the wire; answers marshalled by the generated code.
		grpccodec.ServerOption(),
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	if o.MaxConnectionAge > 0 {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      o.MaxConnectionAge,
			MaxConnectionAgeGrace: o.ShutdownTimeout,
		}))
	}
	if o.TracerProvider != nil {
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(o.TracerProvider),
			otelgrpc.WithPropagators(propagation.TraceContext{}),
			// Health checks and reflection are not worth a trace each.
			otelgrpc.WithFilter(func(info *stats.RPCTagInfo) bool {
				return !strings.HasPrefix(info.FullMethodName, "/grpc.")
			}),
		)))
	}
	return opts
}

// validateUnary checks requests that have a Validate method. It is
// go-grpc-middleware's validator interceptor, except that the status keeps
// the field violations as a google.rpc.BadRequest detail.
func validateUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if v, ok := req.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, toStatus(err)
		}
	}
	return handler(ctx, req)
}

// deadlineUnary bounds a call by CallTimeout.
func (s *Server) deadlineUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	return handler(ctx, req)
}

// Run starts the policy sources, serves on lis until ctx is done, then
// shuts down gracefully: health reports NOT_SERVING, after DrainDelay new
// calls are refused, calls in flight finish (streams after their current
// batch) within ShutdownTimeout, queued results are handed to the sink.
// Health reports SERVING once every source has reported its policies.
//
// Run returns nil after a shutdown caused by ctx, or the error that
// stopped it (the listener failed, a source cannot work).
func (s *Server) Run(ctx context.Context, lis net.Listener) error {
	srcCtx, stopSources := context.WithCancel(context.Background())
	defer stopSources()
	srcErr := make(chan error, 1)
	go func() {
		if err := s.store.run(srcCtx); err != nil {
			srcErr <- err
		}
	}()
	go func() {
		select {
		case <-s.store.Ready():
			s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
			s.log.Info("serving", "address", lis.Addr().String(), "policies", len(s.store.current().policies))
		case <-srcCtx.Done():
		}
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.grpc.Serve(lis) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case err = <-srcErr:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	s.Shutdown(shutdownCtx)
	return err
}

// Shutdown stops the server gracefully (see Run); when ctx ends first,
// calls still in flight are cancelled. It is safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) {
	s.shutdownOnce.Do(func() {
		close(s.draining)
		s.health.Shutdown()
		s.log.Info("shutting down: health is NOT_SERVING")
		if d := s.opts.DrainDelay; d > 0 {
			_ = ctxtime.Sleep(ctx, d) // cut short when ctx ends first
		}
		close(s.stopping)
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			// Stop closes every connection and cancels the calls' contexts;
			// handlers return when they notice.
			s.log.Warn("shutdown timeout: cancelling calls in flight")
			s.grpc.Stop()
		}
		s.log.Info("stopped")
	})
}

// Ready is closed once every policy source has reported its policies
// (when health turns SERVING).
func (s *Server) Ready() <-chan struct{} { return s.store.Ready() }

// RegisterService registers another gRPC service on the server, so that it
// is served on the same listener with the same interceptors (metrics,
// logging, recovery, authentication), TLS and limits; Server implements
// grpc.ServiceRegistrar. Call it before Run. `verdict run` serves the
// report writer this way.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.grpc.RegisterService(desc, impl)
}

// MetricsHandler serves the metrics of the server's registry in the
// Prometheus format.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{Registry: s.opts.Registry})
}

// healthService is the standard health service, except that Watch streams
// end when the server stops taking calls, so that they do not hold up a
// graceful stop.
type healthService struct {
	*health.Server
	stop <-chan struct{}
}

func (h *healthService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return h.Server.Watch(req, &watchStream{Health_WatchServer: stream, ctx: ctx})
}

type watchStream struct {
	healthpb.Health_WatchServer
	ctx context.Context
}

func (w *watchStream) Context() context.Context { return w.ctx }
