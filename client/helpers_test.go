package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/cases"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// staticSource is a policy source that reports fixed documents once.
type staticSource struct {
	name string
	docs []server.Document
}

func (s *staticSource) Name() string { return s.name }

func (s *staticSource) Run(ctx context.Context, update func(server.Snapshot)) error {
	update(server.Snapshot{Documents: s.docs})
	<-ctx.Done()
	return nil
}

// policySource holds the given YAML policy files.
func policySource(tb testing.TB, files ...string) *staticSource {
	tb.Helper()
	src := &staticSource{name: "test"}
	for i, f := range files {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(f), &v); err != nil {
			tb.Fatalf("policy %d: %v", i, err)
		}
		src.docs = append(src.docs, server.Document{Origin: "test.yaml", Line: i + 1, JSON: mustJSON(tb, v)})
	}
	return src
}

// startServer runs a decision server with opts on a loopback port until
// the test ends and returns its address.
func startServer(tb testing.TB, opts server.Options) string {
	tb.Helper()
	return servertest.Start(tb, opts)
}

// dial returns a Client for target, closed when the test ends.
func dial(tb testing.TB, target string, opts client.Options) *client.Client {
	tb.Helper()
	c, err := client.Dial(target, opts)
	if err != nil {
		tb.Fatalf("Dial(%s): %v", target, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// waitServing waits until c's server reports SERVING.
func waitServing(tb testing.TB, c *client.Client) {
	tb.Helper()
	servertest.WaitServing(tb, c)
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// pod returns a Pod with one container running image.
func pod(name, image string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": name, "namespace": "shop", "labels": labels},
		"spec":       map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}},
	}
}

// The policies the tests of every service share (engine/cases).
var (
	teamLabelPolicy = cases.RequireTeamLabel
	latestTagPolicy = cases.DisallowLatestTag
)

// fakeServer is a DecisionService whose methods the test supplies, with
// the standard health service.
type fakeServer struct {
	verdictv1.UnimplementedDecisionServiceServer
	evaluate func(context.Context, *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error)
	stream   func(verdictv1.DecisionService_EvaluateStreamServer) error
	health   *health.Server
	addr     string
	stop     func()
}

func (f *fakeServer) Evaluate(ctx context.Context, req *verdictv1.EvaluateRequest) (*verdictv1.EvaluateResponse, error) {
	return f.evaluate(ctx, req)
}

func (f *fakeServer) EvaluateStream(s verdictv1.DecisionService_EvaluateStreamServer) error {
	return f.stream(s)
}

// startFake serves f on a loopback port until the test ends (or f.stop).
func startFake(tb testing.TB, f *fakeServer) *fakeServer {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	g := grpc.NewServer()
	verdictv1.RegisterDecisionServiceServer(g, f)
	f.health = health.NewServer()
	f.health.SetServingStatus(verdictv1.DecisionService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, f.health)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(lis)
	}()
	f.addr = lis.Addr().String()
	f.stop = func() {
		g.Stop()
		<-done
	}
	tb.Cleanup(f.stop)
	return f
}

// tlsFiles are the PEM files of a test PKI: a CA, a server certificate for
// 127.0.0.1 and localhost, and a client certificate, all signed by the CA.
type tlsFiles struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newTLSFiles(tb testing.TB) tlsFiles {
	tb.Helper()
	dir := tb.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			tb.Fatal(err)
		}
		return path
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			tb.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			tb.Fatal(err)
		}
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", keyDER)
	}
	f := tlsFiles{ca: write("ca.crt", "CERTIFICATE", caDER)}
	f.serverCert, f.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	f.clientCert, f.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return f
}
