package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/testpki"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// outcome is what a test compares of a response: the decision and each
// rule's result.
type outcome struct {
	Allowed bool
	Results []string // "policy/rule: RESULT"
}

func outcomeOf(resp *verdictv1.EvaluateResponse) outcome {
	o := outcome{Allowed: resp.GetAllowed()}
	for _, r := range resp.GetResults() {
		o.Results = append(o.Results, r.GetPolicy()+"/"+r.GetRule()+": "+r.GetResult().String())
	}
	return o
}

func TestEvaluateResource(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy, latestTagPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)

	tests := []struct {
		name     string
		resource any
		opts     []client.RequestOption
		want     outcome
	}{
		{
			name:     "passes",
			resource: pod("web", "nginx:1.27", map[string]any{"team": "shop"}),
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_PASS", "require-team-label/check-team: RESULT_PASS"}},
		},
		{
			name:     "enforce failure denies",
			resource: pod("web", "nginx:1.27", nil),
			want:     outcome{Allowed: false, Results: []string{"disallow-latest-tag/no-latest: RESULT_PASS", "require-team-label/check-team: RESULT_FAIL"}},
		},
		{
			name:     "audit failure allows",
			resource: pod("web", "nginx:latest", map[string]any{"team": "shop"}),
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_FAIL", "require-team-label/check-team: RESULT_PASS"}},
		},
		{
			name:     "JSON bytes",
			resource: json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"team":"a"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}`),
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_PASS", "require-team-label/check-team: RESULT_PASS"}},
		},
		{
			name:     "background mode is always allowed",
			resource: pod("web", "nginx:1.27", nil),
			opts:     []client.RequestOption{client.Background()},
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_PASS", "require-team-label/check-team: RESULT_FAIL"}},
		},
		{
			name:     "policy selector",
			resource: pod("web", "nginx:latest", nil),
			opts:     []client.RequestOption{client.Policies("disallow-latest-tag")},
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_FAIL"}},
		},
		{
			name:     "inline policies",
			resource: pod("web", "nginx:1.27", nil),
			opts:     []client.RequestOption{client.InlinePolicies([]byte(latestTagPolicy))},
			want:     outcome{Allowed: true, Results: []string{"disallow-latest-tag/no-latest: RESULT_PASS"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.EvaluateResource(t.Context(), tt.resource, tt.opts...)
			if err != nil {
				t.Fatalf("EvaluateResource() = %v", err)
			}
			if diff := cmp.Diff(tt.want, outcomeOf(resp)); diff != "" {
				t.Errorf("EvaluateResource() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateErrors(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)

	tests := []struct {
		name       string
		resource   any
		opts       []client.RequestOption
		wantCode   codes.Code // codes.OK: the client refuses before sending
		wantFields []string
	}{
		{
			name:       "unknown policy",
			resource:   pod("p", "nginx", nil),
			opts:       []client.RequestOption{client.Policies("nope")},
			wantCode:   codes.NotFound,
			wantFields: []string{"policy_selector.names[0]"},
		},
		{
			name:       "inline policy that does not compile",
			resource:   pod("p", "nginx", nil),
			opts:       []client.RequestOption{client.InlinePolicies([]byte("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec: {rules: [{name: r, match: {any: [{resources: {kinds: [ConfigMap]}}]}, validate: {message: '{{ bad( }}', deny: {}}}]}\n"))},
			wantCode:   codes.InvalidArgument,
			wantFields: []string{"inline_policies.documents[0].spec.rules[0].validate.message"},
		},
		{
			name:       "missing object",
			resource:   nil,
			wantFields: []string{"object"},
		},
		{
			name:       "bad policy name",
			resource:   pod("p", "nginx", nil),
			opts:       []client.RequestOption{client.Policies("a/b/c")},
			wantFields: []string{"policy_selector.names[0]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.EvaluateResource(t.Context(), tt.resource, tt.opts...)
			if err == nil {
				t.Fatal("EvaluateResource() = nil error, want one")
			}
			if got := status.Code(err); tt.wantCode != codes.OK && got != tt.wantCode {
				t.Errorf("EvaluateResource() code = %v, want %v (%v)", got, tt.wantCode, err)
			}
			var verr *verdictv1.ValidationError
			if sent := !errors.As(err, &verr); sent != (tt.wantCode != codes.OK) {
				t.Errorf("EvaluateResource() error %T (%v): sent to the server = %v, want %v", err, err, sent, tt.wantCode != codes.OK)
			}
			var fields []string
			for _, v := range client.FieldViolations(err) {
				fields = append(fields, v.GetField())
			}
			if diff := cmp.Diff(tt.wantFields, fields); diff != "" {
				t.Errorf("FieldViolations(%v) mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestNewRequest(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	objJSON := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	user := &verdictv1.UserInfo{Username: "alice", Groups: []string{"dev"}}
	tests := []struct {
		name string
		give any
		opts []client.RequestOption
		want *verdictv1.EvaluateRequest
	}{
		{
			name: "map",
			give: obj,
			want: &verdictv1.EvaluateRequest{Object: objJSON},
		},
		{
			name: "update with old object, namespace, user, variables",
			give: objJSON,
			opts: []client.RequestOption{
				client.Operation(verdictv1.Operation_OPERATION_UPDATE),
				client.OldObject(obj),
				client.Namespace("shop", map[string]string{"env": "prod"}),
				client.User(user),
				client.DryRun(),
				client.Variable("request.operation", "UPDATE"),
			},
			want: &verdictv1.EvaluateRequest{
				Object:          objJSON,
				OldObject:       objJSON,
				Operation:       verdictv1.Operation_OPERATION_UPDATE,
				Namespace:       "shop",
				NamespaceLabels: map[string]string{"env": "prod"},
				UserInfo:        user,
				DryRun:          true,
				Variables:       map[string][]byte{"request.operation": []byte(`"UPDATE"`)},
			},
		},
		{
			name: "delete with old object only",
			give: nil,
			opts: []client.RequestOption{client.Operation(verdictv1.Operation_OPERATION_DELETE), client.OldObject(obj)},
			want: &verdictv1.EvaluateRequest{OldObject: objJSON, Operation: verdictv1.Operation_OPERATION_DELETE},
		},
		{
			name: "background with policy labels",
			give: obj,
			opts: []client.RequestOption{client.Background(), client.PolicyLabels(map[string]string{"set": "baseline"})},
			want: &verdictv1.EvaluateRequest{
				Object:   objJSON,
				Mode:     verdictv1.Mode_MODE_BACKGROUND,
				Policies: &verdictv1.EvaluateRequest_PolicySelector{PolicySelector: &verdictv1.PolicySelector{Labels: map[string]string{"set": "baseline"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := client.NewRequest(tt.give, tt.opts...)
			if err != nil {
				t.Fatalf("NewRequest() = %v", err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("NewRequest() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		give any
		opts []client.RequestOption
	}{
		{name: "array", give: []any{1, 2}},
		{name: "JSON bytes that are not an object", give: []byte(`[1]`)},
		{name: "not encodable", give: map[string]any{"f": func() {}}},
		{name: "no policy names", give: map[string]any{}, opts: []client.RequestOption{client.Policies()}},
		{name: "old object not an object", give: map[string]any{}, opts: []client.RequestOption{client.OldObject("x")}},
		{name: "variable not encodable", give: map[string]any{}, opts: []client.RequestOption{client.Variable("v", make(chan int))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := client.NewRequest(tt.give, tt.opts...); err == nil {
				t.Errorf("NewRequest(%v) = %v, want an error", tt.give, got)
			}
		})
	}
}

func TestDialErrors(t *testing.T) {
	tests := []struct {
		name string
		give client.Options
	}{
		{name: "too many attempts", give: client.Options{MaxAttempts: 6}},
		{name: "negative attempts", give: client.Options{MaxAttempts: -1}},
		{name: "token without TLS", give: client.Options{BearerToken: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := client.Dial("127.0.0.1:1", tt.give); err == nil {
				c.Close()
				t.Errorf("Dial(%+v) = nil error, want one", tt.give)
			}
		})
	}
}

// okResponse answers every call with an allowed decision.
func okResponse(context.Context, *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
	return &verdictv1.EvaluateResponse{Allowed: true}, nil
}

// manualTarget returns a target whose addresses are those of servers,
// resolved through a manual resolver, and the dial option that installs
// it: the same balancing as a dns:/// target with one address per
// replica.
func manualTarget(addrs ...string) (string, grpc.DialOption, *manual.Resolver) {
	r := manual.NewBuilderWithScheme("verdicttest")
	var st resolver.State
	for _, a := range addrs {
		st.Addresses = append(st.Addresses, resolver.Address{Addr: a})
	}
	r.InitialState(st)
	return r.Scheme() + ":///verdict", grpc.WithResolvers(r), r
}

func TestRoundRobin(t *testing.T) {
	const servers, calls = 3, 30
	counts := make([]atomic.Int32, servers)
	var addrs []string
	for i := range servers {
		f := startFake(t, &fakeServer{evaluate: func(ctx context.Context, r *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
			counts[i].Add(1)
			return okResponse(ctx, r)
		}})
		addrs = append(addrs, f.addr)
	}
	target, opt, _ := manualTarget(addrs...)
	c := dial(t, target, client.Options{DialOptions: []grpc.DialOption{opt}, WaitForReady: true})
	// Round-robin starts once every address is connected.
	eventuallyAll(t, c, counts)
	for i := range counts {
		counts[i].Store(0)
	}
	for range calls {
		if _, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil)); err != nil {
			t.Fatalf("EvaluateResource() = %v", err)
		}
	}
	var got []int32
	for i := range counts {
		got = append(got, counts[i].Load())
	}
	if diff := cmp.Diff([]int32{calls / servers, calls / servers, calls / servers}, got); diff != "" {
		t.Errorf("calls per server mismatch (-want +got):\n%s", diff)
	}
}

// eventuallyAll calls until every server has had a call, or fails after
// 10s.
func eventuallyAll(t *testing.T, c *client.Client, counts []atomic.Int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil)); err != nil {
			t.Fatalf("EvaluateResource() = %v", err)
		}
		all := true
		for i := range counts {
			all = all && counts[i].Load() > 0
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("not every server got a call after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRetryUnavailable(t *testing.T) {
	tests := []struct {
		name         string
		maxAttempts  int
		failures     int        // calls that fail before one succeeds
		failCode     codes.Code // of the failures
		wantCode     codes.Code
		wantAttempts int32
	}{
		{name: "retried until it succeeds", maxAttempts: 4, failures: 3, failCode: codes.Unavailable, wantCode: codes.OK, wantAttempts: 4},
		{name: "attempts run out", maxAttempts: 3, failures: 3, failCode: codes.Unavailable, wantCode: codes.Unavailable, wantAttempts: 3},
		{name: "retries off", maxAttempts: 1, failures: 1, failCode: codes.Unavailable, wantCode: codes.Unavailable, wantAttempts: 1},
		{name: "other codes are not retried", maxAttempts: 4, failures: 1, failCode: codes.Internal, wantCode: codes.Internal, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var attempts atomic.Int32
			f := startFake(t, &fakeServer{evaluate: func(ctx context.Context, r *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
				if int(attempts.Add(1)) <= tt.failures {
					return nil, status.Error(tt.failCode, "not now")
				}
				return okResponse(ctx, r)
			}})
			c := dial(t, f.addr, client.Options{MaxAttempts: tt.maxAttempts, WaitForReady: true})
			_, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil))
			if got := status.Code(err); got != tt.wantCode {
				t.Errorf("EvaluateResource() = %v, want code %v", err, tt.wantCode)
			}
			if got := attempts.Load(); got != tt.wantAttempts {
				t.Errorf("server got %d attempts, want %d", got, tt.wantAttempts)
			}
		})
	}
}

func TestFailover(t *testing.T) {
	var served [2]atomic.Int32
	var fakes [2]*fakeServer
	for i := range fakes {
		fakes[i] = startFake(t, &fakeServer{evaluate: func(ctx context.Context, r *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
			served[i].Add(1)
			return okResponse(ctx, r)
		}})
	}
	target, opt, _ := manualTarget(fakes[0].addr, fakes[1].addr)
	c := dial(t, target, client.Options{DialOptions: []grpc.DialOption{opt}})
	eventuallyAll(t, c, served[:])
	fakes[0].stop()
	served[1].Store(0)
	const calls = 20
	for i := range calls {
		if _, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil)); err != nil {
			t.Fatalf("call %d after one server stopped: %v", i, err)
		}
	}
	if got := served[1].Load(); got != calls {
		t.Errorf("the remaining server got %d calls, want %d", got, calls)
	}
}

func TestHealthCheckAvoidsNotServing(t *testing.T) {
	var served [2]atomic.Int32
	var fakes [2]*fakeServer
	for i := range fakes {
		fakes[i] = startFake(t, &fakeServer{evaluate: func(ctx context.Context, r *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
			served[i].Add(1)
			return okResponse(ctx, r)
		}})
	}
	fakes[0].health.SetServingStatus(verdictv1.DecisionService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	target, opt, _ := manualTarget(fakes[0].addr, fakes[1].addr)
	c := dial(t, target, client.Options{DialOptions: []grpc.DialOption{opt}, WaitForReady: true})
	for i := range 20 {
		if _, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := []int32{served[0].Load(), served[1].Load()}; !cmp.Equal(got, []int32{0, 20}) {
		t.Errorf("calls per server = %v, want [0 20] (the first is NOT_SERVING)", got)
	}
}

func TestDeadline(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := startFake(t, &fakeServer{evaluate: func(ctx context.Context, r *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
		if r.GetNamespace() == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if r.GetNamespace() == "150ms" {
			time.Sleep(150 * time.Millisecond)
		}
		return okResponse(ctx, r)
	}})
	c := dial(t, f.addr, client.Options{Timeout: 50 * time.Millisecond, WaitForReady: true})
	if _, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil)); err != nil {
		t.Fatalf("fast call: %v", err)
	}

	start := time.Now()
	_, err := c.EvaluateResource(t.Context(), pod("p", "nginx", nil), client.Namespace("slow", nil))
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("slow call = %v, want DEADLINE_EXCEEDED", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("slow call took %v, want about the 50ms default deadline", d)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := c.EvaluateResource(ctx, pod("p", "nginx", nil), client.Namespace("150ms", nil)); err != nil {
		t.Errorf("150ms call with a 5s context deadline = %v, want the context's deadline to win", err)
	}
}

func TestAuth(t *testing.T) {
	pki := testpki.WriteFiles(t, t.TempDir())
	serverTLS, err := server.TLSConfig(pki.ServerCert, pki.ServerKey, pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, server.Options{
		Sources:      []server.PolicySource{policySource(t, teamLabelPolicy)},
		TLS:          serverTLS,
		BearerTokens: []string{"s3cret"},
	})
	withCert, err := client.TLSConfig(pki.CA, pki.ClientCert, pki.ClientKey, "")
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := client.TLSConfig(pki.CA, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	wrongName, err := client.TLSConfig(pki.CA, pki.ClientCert, pki.ClientKey, "verdict.example")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		target   string
		opts     client.Options
		wantCode codes.Code
	}{
		{name: "client certificate and token", target: addr, opts: client.Options{TLS: withCert, BearerToken: "s3cret"}, wantCode: codes.OK},
		{name: "localhost name", target: "localhost:" + portOf(addr), opts: client.Options{TLS: withCert, BearerToken: "s3cret"}, wantCode: codes.OK},
		{name: "no token", target: addr, opts: client.Options{TLS: withCert}, wantCode: codes.Unauthenticated},
		{name: "wrong token", target: addr, opts: client.Options{TLS: withCert, BearerToken: "guess"}, wantCode: codes.Unauthenticated},
		{name: "no client certificate", target: addr, opts: client.Options{TLS: noCert, BearerToken: "s3cret"}, wantCode: codes.Unavailable},
		{name: "server name mismatch", target: addr, opts: client.Options{TLS: wrongName, BearerToken: "s3cret"}, wantCode: codes.Unavailable},
		{name: "plain text", target: addr, opts: client.Options{BearerToken: "s3cret", AllowInsecureToken: true}, wantCode: codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.MaxAttempts = 1
			tt.opts.DisableHealthCheck = true
			c := dial(t, tt.target, tt.opts)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var err error
			// The server may still be loading its policies.
			for {
				_, err = c.EvaluateResource(ctx, pod("p", "nginx", map[string]any{"team": "a"}))
				if status.Code(err) != codes.Unavailable || tt.wantCode == codes.Unavailable || ctx.Err() != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := status.Code(err); got != tt.wantCode {
				t.Errorf("EvaluateResource() = %v, want code %v", err, tt.wantCode)
			}
		})
	}
}

func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[i+1:]
		}
	}
	return addr
}

func TestTLSConfigErrors(t *testing.T) {
	pki := testpki.WriteFiles(t, t.TempDir())
	tests := []struct {
		name                      string
		ca, cert, key, serverName string
	}{
		{name: "missing CA file", ca: pki.CA + ".missing"},
		{name: "CA file without PEM", ca: pki.ClientKey},
		{name: "certificate without key", cert: pki.ClientCert},
		{name: "key without certificate", key: pki.ClientKey},
		{name: "key of another certificate", cert: pki.ClientCert, key: pki.ServerKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := client.TLSConfig(tt.ca, tt.cert, tt.key, tt.serverName); err == nil {
				t.Errorf("TLSConfig(%q, %q, %q) = nil error, want one", tt.ca, tt.cert, tt.key)
			}
		})
	}
}

func TestListAndGetPolicy(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy, latestTagPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	list, err := c.ListPolicies(t.Context())
	if err != nil {
		t.Fatalf("ListPolicies() = %v", err)
	}
	var names []string
	for _, p := range list.GetPolicies() {
		names = append(names, p.GetName())
	}
	if diff := cmp.Diff([]string{"disallow-latest-tag", "require-team-label"}, names); diff != "" {
		t.Errorf("ListPolicies() names mismatch (-want +got):\n%s", diff)
	}
	got, err := c.GetPolicy(t.Context(), "", "require-team-label")
	if err != nil {
		t.Fatalf("GetPolicy() = %v", err)
	}
	if diff := cmp.Diff([]string{"check-team", "autogen-check-team", "autogen-cronjob-check-team"}, got.GetPolicy().GetRules()); diff != "" {
		t.Errorf("GetPolicy() rules mismatch (-want +got):\n%s", diff)
	}
	if _, err := c.GetPolicy(t.Context(), "", "nope"); status.Code(err) != codes.NotFound {
		t.Errorf("GetPolicy(nope) = %v, want NOT_FOUND", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	addr := startServer(t, server.Options{Sources: []server.PolicySource{policySource(t, teamLabelPolicy)}})
	c := dial(t, addr, client.Options{})
	waitServing(t, c)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			resp, err := c.EvaluateResource(t.Context(), pod("p", "nginx", map[string]any{"team": "a"}))
			if err == nil && !resp.GetAllowed() {
				err = errors.New("denied")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent EvaluateResource() = %v", err)
		}
	}
}
