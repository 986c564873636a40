package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/celdata"
)

func TestRunCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"run", "--policies", "../../examples/policies", "--listen", "127.0.0.1:0", "--log-level", "error", "--reports-db", filepath.Join(t.TempDir(), "reports.db")}, outW, &stderr)
		outW.Close()
	}()

	// The banner names the address.
	addrRE := regexp.MustCompile(`server on (127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(outR)
	var addr string
	var banner []string
	for sc.Scan() {
		banner = append(banner, sc.Text())
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("verdict run printed no address: %q (stderr %q)", banner, stderr.String())
	}
	go io.Copy(io.Discard, outR)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := verdictv1.NewDecisionServiceClient(conn)
	obj := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx:latest"}]}}`)
	var resp *verdictv1.EvaluateResponse
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err = c.Evaluate(ctx, &verdictv1.EvaluateRequest{Object: obj})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Evaluate against verdict run: %v", err)
	}
	if resp.GetAllowed() || !strings.Contains(resp.GetMessage(), "was blocked due to the following policies") {
		t.Errorf("Evaluate(Pod without team label) = allowed %v, message %q; want blocked by the example policies", resp.GetAllowed(), resp.GetMessage())
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("verdict run after Ctrl-C: exit code %d, want 0 (stderr %q)", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("verdict run did not stop within 30s of its context ending")
	}
}

func TestServeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-tokens")
	if err := os.WriteFile(empty, []byte("# none\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		give     []string
		wantCode int
		wantErr  string
	}{
		{"missing policy folder", []string{"serve", "--policies", filepath.Join(dir, "nope"), "--listen", "127.0.0.1:0"}, 2, "not a folder"},
		{"bad log level", []string{"serve", "--listen", "127.0.0.1:0", "--log-level", "loud"}, 2, "--log-level"},
		{"bad log format", []string{"serve", "--listen", "127.0.0.1:0", "--log-format", "xml"}, 2, "--log-format"},
		{"token file without tokens", []string{"serve", "--listen", "127.0.0.1:0", "--token-file", empty}, 2, "no token"},
		{"key without certificate", []string{"serve", "--listen", "127.0.0.1:0", "--tls-key", empty}, 2, "certificate and a key"},
		{"bad listen address", []string{"serve", "--listen", "nope:-1", "--metrics-listen", ""}, 2, "--listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.give, &stdout, &stderr)
			if got != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tt.give, got, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestServeListenDefaults checks that serve listens on loopback unless
// told otherwise, its metrics endpoint too.
func TestServeListenDefaults(t *testing.T) {
	tests := []struct {
		flag, want string
	}{
		{"listen", "127.0.0.1:50051"},
		{"metrics-listen", "127.0.0.1:9090"},
	}
	fs := newServeCmd().Flags()
	for _, tt := range tests {
		if got := fs.Lookup(tt.flag).DefValue; got != tt.want {
			t.Errorf("verdict serve --%s default = %q, want %q", tt.flag, got, tt.want)
		}
	}
}

func TestListenWarnings(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50051}
	loopback6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 50051}
	all := &net.TCPAddr{IP: net.IPv6unspecified, Port: 50051}
	host := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 50051}
	const plaintextTokens, exposed = "tokens travel in plain text", "neither TLS nor tokens"
	tests := []struct {
		name        string
		addr        net.Addr
		tls, tokens bool
		want        []string
	}{
		{"loopback", loopback, false, false, nil},
		{"loopback v6", loopback6, false, false, nil},
		{"loopback with tokens", loopback, false, true, []string{plaintextTokens}},
		{"loopback with TLS and tokens", loopback, true, true, nil},
		{"all interfaces", all, false, false, []string{exposed}},
		{"a host address", host, false, false, []string{exposed}},
		{"all interfaces with tokens", all, false, true, []string{plaintextTokens}},
		{"all interfaces with TLS", all, true, false, nil},
		{"all interfaces with TLS and tokens", all, true, true, nil},
	}
	for _, tt := range tests {
		got := listenWarnings(tt.addr, tt.tls, tt.tokens)
		if len(got) != len(tt.want) {
			t.Errorf("listenWarnings(%s) = %q, want %d warnings holding %q", tt.name, got, len(tt.want), tt.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("listenWarnings(%s)[%d] = %q, want it to hold %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

// logBuffer is a bytes.Buffer safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeWarnsAtStart runs serve with tokens over plain text, then on
// every interface with neither TLS nor tokens, and checks the warning it
// logs at start.
func TestServeWarnsAtStart(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give []string
		want string
	}{
		{"tokens in plain text", []string{"--listen", "127.0.0.1:0", "--token-file", tokens}, "bearer tokens travel in plain text"},
		{"every interface", []string{"--listen", ":0"}, "neither TLS nor tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var stdout bytes.Buffer
			var stderr logBuffer
			code := make(chan int, 1)
			args := append([]string{"serve", "--metrics-listen", "", "--log-level", "warn"}, tt.give...)
			go func() { code <- run(ctx, args, &stdout, &stderr) }()
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(stderr.String(), tt.want) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := stderr.String(); !strings.Contains(got, tt.want) || !strings.Contains(got, "level=WARN") {
				t.Errorf("run(%q) logged %q, want a warning holding %q", args, got, tt.want)
			}
			cancel()
			if c := <-code; c != 0 {
				t.Errorf("run(%q) after its context ended = %d, want 0 (stderr %q)", args, c, stderr.String())
			}
		})
	}
}

// TestServeLimitFlags checks that the limits on what clients can make the
// server hold reach its options, with their defaults.
func TestServeLimitFlags(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want server.Options
	}{
		{"defaults", nil, server.Options{
			InlineCacheBytes:      server.DefaultInlineCacheBytes,
			MaxRequestPolicyBytes: server.DefaultMaxRequestPolicyBytes,
			MaxRequestPolicyRules: server.DefaultMaxRequestPolicyRules,
			MetricsMaxSeries:      server.DefaultMetricsMaxSeries,
			MaxCELDataCalls:       server.DefaultMaxCELDataCalls,
		}},
		{"set", []string{"--inline-cache-bytes=1000", "--max-request-policy-bytes=2000", "--max-request-policy-rules=3",
			"--metrics-max-series=4", "--metrics-namespaces-include=a,b", "--metrics-namespaces-exclude=c",
			"--max-cel-data-calls=5", "--cel-http-inline-policies", "--cel-http-namespaced-policies", "--no-kyverno-result-metrics"}, server.Options{
			InlineCacheBytes:          1000,
			MaxRequestPolicyBytes:     2000,
			MaxRequestPolicyRules:     3,
			MetricsMaxSeries:          4,
			MetricsNamespaces:         server.NamespaceFilter{Include: []string{"a", "b"}, Exclude: []string{"c"}},
			MaxCELDataCalls:           5,
			CELHTTPInlinePolicies:     true,
			CELHTTPNamespacedPolicies: true,
			NoKyvernoResultMetrics:    true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f serveFlags
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			f.register(fs, "", "127.0.0.1:0", "")
			if err := fs.Parse(tt.give); err != nil {
				t.Fatal(err)
			}
			opts, err := f.options(io.Discard)
			if err != nil {
				t.Fatalf("options(%q): %v", tt.give, err)
			}
			got := server.Options{
				InlineCacheBytes:          opts.InlineCacheBytes,
				MaxRequestPolicyBytes:     opts.MaxRequestPolicyBytes,
				MaxRequestPolicyRules:     opts.MaxRequestPolicyRules,
				MetricsMaxSeries:          opts.MetricsMaxSeries,
				MetricsNamespaces:         opts.MetricsNamespaces,
				MaxCELDataCalls:           opts.MaxCELDataCalls,
				CELHTTPInlinePolicies:     opts.CELHTTPInlinePolicies,
				CELHTTPNamespacedPolicies: opts.CELHTTPNamespacedPolicies,
				NoKyvernoResultMetrics:    opts.NoKyvernoResultMetrics,
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(server.Options{})); diff != "" {
				t.Errorf("options(%q) limits (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

// TestServeCELHTTPFlags: --cel-http-allow and --cel-data-block reach the
// HTTP source of the server's CEL data (a bad entry is an error naming
// the flags), and without --cel-http-allow every call is refused.
func TestServeCELHTTPFlags(t *testing.T) {
	tests := []struct {
		name    string
		give    []string
		wantErr bool
	}{
		{"defaults", nil, false},
		{"allowed prefixes", []string{"--cel-http-allow=https://api.example.com,https://hooks.example.com/v1/"}, false},
		{"an allowed prefix without a scheme", []string{"--cel-http-allow=api.example.com"}, true},
		{"a blocked range that does not parse", []string{"--cel-data-block=10.0.0.0/40"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f serveFlags
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			f.register(fs, "", "127.0.0.1:0", "")
			if err := fs.Parse(tt.give); err != nil {
				t.Fatal(err)
			}
			opts, err := f.options(io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("options(%q) error = %v, want error %v", tt.give, err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "--cel-data-block") {
					t.Errorf("options(%q) error = %v, want it to name the flags", tt.give, err)
				}
				return
			}
			if opts.CELData.HTTP == nil {
				t.Fatalf("options(%q): no HTTP source", tt.give)
			}
			if _, err := opts.CELData.HTTP.Get(t.Context(), "https://elsewhere.example.com/", nil); !errors.Is(err, celdata.ErrRefused) {
				t.Errorf("options(%q): Get(a URL not allowed) = %v, want ErrRefused", tt.give, err)
			}
		})
	}
}
