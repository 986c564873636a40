package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health" // registers client-side health checking, used by the service config
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"github.com/verdict-policy/verdict/internal/grpccodec"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of Options.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultMaxAttempts      = 4
	DefaultKeepaliveTime    = 30 * time.Second
	DefaultKeepaliveTimeout = 10 * time.Second
	DefaultMaxMessageBytes  = 4 << 20
)

// maxAttemptsLimit is gRPC's cap on retry attempts; a service config asking
// for more gets 5.
const maxAttemptsLimit = 5

// minKeepaliveTime is the server's keepalive enforcement minimum
// (server.KeepaliveMinTime): a client that pings more often is
// disconnected.
const minKeepaliveTime = 10 * time.Second

// serviceName is the gRPC name of the decision service.
var serviceName = verdictv1.DecisionService_ServiceDesc.ServiceName

// Options configure a Client. The zero value is usable: a plain-text
// connection, round-robin over every address of the target, retries on
// UNAVAILABLE and a 5s deadline per call. Defaults are filled by
// withDefaults at the top of Dial.
type Options struct {
	// Timeout is the deadline of a unary call whose context has none. A
	// context deadline always wins. Streams (Scan) get no default
	// deadline. Default 5s.
	Timeout time.Duration

	// MaxAttempts is the number of attempts of a unary call that fails
	// with UNAVAILABLE (the server is shutting down, not ready, or
	// unreachable), retried on the next address with exponential backoff
	// from 50ms. 1 turns retries off; at most 5 (gRPC's limit). Default 4.
	MaxAttempts int

	// TLS connects with TLS using this configuration; set Certificates
	// (see TLSConfig) for mTLS. Default: plain text.
	TLS *tls.Config

	// BearerToken, when set, is sent as "authorization: bearer <token>"
	// with every call. Over plain text only with AllowInsecureToken.
	BearerToken string
	// AllowInsecureToken sends BearerToken over a plain-text connection
	// (a loopback server, or a mesh that encrypts). Default false: Dial
	// refuses a token without TLS.
	AllowInsecureToken bool

	// KeepaliveTime is the idle time after which the client pings the
	// server, and KeepaliveTimeout how long it waits for the answer
	// before it closes the connection. Default 30s and 10s;
	// KeepaliveTime is at least 10s, the server's minimum.
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration

	// MaxMessageBytes limits a sent and a received message. Default
	// 4 MiB, as the server's.
	MaxMessageBytes int

	// WaitForReady makes a call wait (within its deadline) for a server
	// that is not reachable yet instead of failing with UNAVAILABLE at
	// once. Default false.
	WaitForReady bool

	// DisableHealthCheck turns off client-side health checking. By
	// default the client watches each address's grpc.health.v1 status for
	// the decision service and sends calls only to addresses reporting
	// SERVING, so a replica that is draining or still loading its
	// policies gets no new calls.
	DisableHealthCheck bool

	// TracerProvider, when set, traces every call (OpenTelemetry, through
	// otelgrpc) and sends the trace context to the server, so a caller's
	// trace continues there. Default: no tracing.
	TracerProvider trace.TracerProvider

	// DialOptions are appended to the options Dial builds (a custom
	// resolver or dialer, interceptors, stats handlers).
	DialOptions []grpc.DialOption
}

// withDefaults returns o with every unset field set to its default, or an
// error for a value out of range.
func (o Options) withDefaults() (Options, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.MaxAttempts == 0:
		o.MaxAttempts = DefaultMaxAttempts
	case o.MaxAttempts < 0 || o.MaxAttempts > maxAttemptsLimit:
		return o, fmt.Errorf("MaxAttempts %d: want 1 to %d", o.MaxAttempts, maxAttemptsLimit)
	}
	if o.KeepaliveTime <= 0 {
		o.KeepaliveTime = DefaultKeepaliveTime
	}
	if o.KeepaliveTime < minKeepaliveTime {
		o.KeepaliveTime = minKeepaliveTime
	}
	if o.KeepaliveTimeout <= 0 {
		o.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.BearerToken != "" && o.TLS == nil && !o.AllowInsecureToken {
		return o, errors.New("a bearer token needs TLS (or AllowInsecureToken)")
	}
	return o, nil
}

// Client calls a Verdict decision service. It is safe for concurrent use;
// share one Client (one connection per server address) in a process.
type Client struct {
	conn    *grpc.ClientConn
	api     verdictv1.DecisionServiceClient
	timeout time.Duration
}

// Dial returns a Client for target, a gRPC target name:
//
//   - "dns:///verdict.verdict-system.svc:9443" resolves every address of a
//     (headless) Service and balances calls over them round-robin,
//     following DNS changes;
//   - "host:port" is the same as "dns:///host:port";
//   - "passthrough:///10.0.0.1:9443" or "unix:///run/verdict.sock" name one
//     address.
//
// Dial does not connect: the first call does, and a server that cannot be
// reached shows as UNAVAILABLE then. Close the Client when done.
func Dial(target string, opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("client options: %w", err)
	}
	dopts := []grpc.DialOption{
		// Ignore service configs published in DNS TXT records: ours
		// carries the load-balancing and retry policy.
		grpc.WithDisableServiceConfig(),
		grpc.WithDefaultServiceConfig(serviceConfig(o)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                o.KeepaliveTime,
			Timeout:             o.KeepaliveTimeout,
			PermitWithoutStream: true,
		}),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(o.MaxMessageBytes),
			grpc.MaxCallSendMsgSize(o.MaxMessageBytes),
			grpc.WaitForReady(o.WaitForReady),
		),
		grpc.WithChainUnaryInterceptor(deadlineInterceptor(o.Timeout)),
	}
	if o.TLS != nil {
		dopts = append(dopts, grpc.WithTransportCredentials(credentials.NewTLS(o.TLS)))
	} else {
		dopts = append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if o.BearerToken != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearerToken{token: o.BearerToken, secure: !o.AllowInsecureToken}))
	}
	if o.TracerProvider != nil {
		dopts = append(dopts, grpc.WithStatsHandler(otelgrpc.NewClientHandler(
			otelgrpc.WithTracerProvider(o.TracerProvider),
			otelgrpc.WithPropagators(propagation.TraceContext{}),
		)))
	}
	// Protobuf on the wire, with the generated (reflection-free) code.
	dopts = append(dopts, grpccodec.DialOption())
	dopts = append(dopts, o.DialOptions...)
	conn, err := grpc.NewClient(target, dopts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", target, err)
	}
	return &Client{conn: conn, api: verdictv1.NewDecisionServiceClient(conn), timeout: o.Timeout}, nil
}

// serviceConfig is the gRPC service config of every Client: round-robin
// over the resolved addresses, retries of the unary methods on
// UNAVAILABLE, and (unless disabled) client-side health checking.
func serviceConfig(o Options) string {
	type name struct {
		Service string `json:"service"`
		Method  string `json:"method,omitempty"`
	}
	type retryPolicy struct {
		MaxAttempts          int      `json:"maxAttempts"`
		InitialBackoff       string   `json:"initialBackoff"`
		MaxBackoff           string   `json:"maxBackoff"`
		BackoffMultiplier    float64  `json:"backoffMultiplier"`
		RetryableStatusCodes []string `json:"retryableStatusCodes"`
	}
	type methodConfig struct {
		Name        []name       `json:"name"`
		RetryPolicy *retryPolicy `json:"retryPolicy,omitempty"`
	}
	type healthCheckConfig struct {
		ServiceName string `json:"serviceName"`
	}
	sc := struct {
		LoadBalancingConfig []map[string]struct{} `json:"loadBalancingConfig"`
		MethodConfig        []methodConfig        `json:"methodConfig,omitempty"`
		HealthCheckConfig   *healthCheckConfig    `json:"healthCheckConfig,omitempty"`
	}{
		LoadBalancingConfig: []map[string]struct{}{{"round_robin": {}}},
	}
	if o.MaxAttempts > 1 {
		// EvaluateStream is left out: a stream is retried by Scan, which
		// resends the batches that got no answer.
		sc.MethodConfig = []methodConfig{{
			Name: []name{
				{Service: serviceName, Method: "Evaluate"},
				{Service: serviceName, Method: "ListPolicies"},
				{Service: serviceName, Method: "GetPolicy"},
			},
			RetryPolicy: &retryPolicy{
				MaxAttempts:          o.MaxAttempts,
				InitialBackoff:       "0.05s",
				MaxBackoff:           "1s",
				BackoffMultiplier:    2,
				RetryableStatusCodes: []string{"UNAVAILABLE"},
			},
		}}
	}
	if !o.DisableHealthCheck {
		sc.HealthCheckConfig = &healthCheckConfig{ServiceName: serviceName}
	}
	b, _ := json.Marshal(sc) // plain structs: cannot fail
	return string(b)
}

// deadlineInterceptor gives a unary call without a deadline the default
// one.
func deadlineInterceptor(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// bearerToken sends "authorization: bearer <token>" with every call.
type bearerToken struct {
	token  string
	secure bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "bearer " + b.token}, nil
}

func (b bearerToken) RequireTransportSecurity() bool { return b.secure }

// Close closes the connections of the Client. Calls in flight fail with
// CANCELED.
func (c *Client) Close() error { return c.conn.Close() }

// Conn returns the Client's connection, for other services on the same
// server (health, reflection).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// API returns the generated client of the decision service, for calls the
// typed helpers do not cover. Its unary calls get the Client's deadline,
// retries and credentials too.
func (c *Client) API() verdictv1.DecisionServiceClient { return c.api }

// Evaluate decides one request. Errors are gRPC status errors (see
// FieldViolations for INVALID_ARGUMENT).
func (c *Client) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest, opts ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	return c.api.Evaluate(ctx, req, opts...)
}

// EvaluateResource decides one resource: resource is anything that
// encodes as a JSON object (a map, a typed Kubernetes object, an
// unstructured.Unstructured, or JSON bytes), and opts fill the rest of
// the request (see NewRequest).
func (c *Client) EvaluateResource(ctx context.Context, resource any, opts ...RequestOption) (*verdictv1.EvaluateResponse, error) {
	req, err := NewRequest(resource, opts...)
	if err != nil {
		return nil, err
	}
	return c.api.Evaluate(ctx, req)
}

// ListPolicies lists the policies the server holds, with their errors.
func (c *Client) ListPolicies(ctx context.Context) (*verdictv1.ListPoliciesResponse, error) {
	return c.api.ListPolicies(ctx, &verdictv1.ListPoliciesRequest{})
}

// GetPolicy returns one policy the server holds; namespace is empty for a
// ClusterPolicy. NOT_FOUND when the server holds no such policy.
func (c *Client) GetPolicy(ctx context.Context, namespace, name string) (*verdictv1.GetPolicyResponse, error) {
	return c.api.GetPolicy(ctx, &verdictv1.GetPolicyRequest{Namespace: namespace, Name: name})
}

// ValidatePolicies compiles policy documents (YAML or JSON) on the server
// without serving them and returns the problems of each document.
func (c *Client) ValidatePolicies(ctx context.Context, req *verdictv1.ValidatePoliciesRequest, opts ...grpc.CallOption) (*verdictv1.ValidatePoliciesResponse, error) {
	return c.api.ValidatePolicies(ctx, req, opts...)
}

// CheckHealth asks the server (one of the addresses of the target) whether
// the decision service is SERVING. It returns nil when it is, and an error
// naming the status otherwise.
func (c *Client) CheckHealth(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: serviceName})
	if err != nil {
		return err
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("decision service is %s", s)
	}
	return nil
}
