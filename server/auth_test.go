package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/verdict-policy/verdict/internal/testing/testpki"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// insecureToken sends a bearer token over a plain-text connection (tests
// only; grpc's oauth credentials refuse plain text).
type insecureToken string

func (t insecureToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (insecureToken) RequireTransportSecurity() bool { return false }

func TestBearerTokens(t *testing.T) {
	ts := startServer(t, Options{BearerTokens: []string{"s3cret", "other"}})
	req := &verdictv1.EvaluateRequest{
		Object:   pod(t, "p", "default", "nginx", nil),
		Policies: &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(teamLabelPolicy)}}},
	}
	tests := []struct {
		name       string
		giveOpts   []grpc.DialOption
		wantCode   codes.Code
		wantHealth codes.Code
	}{
		{"no token", nil, codes.Unauthenticated, codes.OK},
		{"wrong token", []grpc.DialOption{grpc.WithPerRPCCredentials(insecureToken("nope"))}, codes.Unauthenticated, codes.OK},
		{"first token", []grpc.DialOption{grpc.WithPerRPCCredentials(insecureToken("s3cret"))}, codes.OK, codes.OK},
		{"second token", []grpc.DialOption{grpc.WithPerRPCCredentials(insecureToken("other"))}, codes.OK, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, ts.addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, tt.giveOpts...)...)
			waitServing(t, conn)
			_, err := verdictv1.NewDecisionServiceClient(conn).Evaluate(t.Context(), req)
			if code, _ := statusOf(err); code != tt.wantCode {
				t.Errorf("Evaluate with %s: code %v, want %v (%v)", tt.name, code, tt.wantCode, err)
			}
			stream, err := verdictv1.NewDecisionServiceClient(conn).EvaluateStream(t.Context())
			if err == nil {
				stream.CloseSend()
				if _, err = stream.Recv(); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			if code, _ := statusOf(err); code != tt.wantCode {
				t.Errorf("EvaluateStream with %s: code %v, want %v (%v)", tt.name, code, tt.wantCode, err)
			}
			_, err = healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
			if code, _ := statusOf(err); code != tt.wantHealth {
				t.Errorf("health Check with %s: code %v, want %v", tt.name, code, tt.wantHealth)
			}
		})
	}
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "verdict test CA")
	other := testpki.NewCA(t, "another CA")
	srvCert, srvKey := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	cfg, err := TLSConfig(
		testpki.Write(t, dir, "server.crt", srvCert),
		testpki.Write(t, dir, "server.key", srvKey),
		testpki.Write(t, dir, "ca.crt", ca.PEM),
	)
	if err != nil {
		t.Fatalf("TLSConfig: %v", err)
	}
	ts := startServer(t, Options{TLS: cfg})

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	clientTLS := func(ca *testpki.CA) *tls.Config {
		c := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if ca != nil {
			certPEM, keyPEM := ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			c.Certificates = []tls.Certificate{pair}
		}
		return c
	}
	tests := []struct {
		name     string
		giveOpt  grpc.DialOption
		wantCode codes.Code
	}{
		{"client certificate of the client CA", grpc.WithTransportCredentials(credentials.NewTLS(clientTLS(ca))), codes.OK},
		{"no client certificate", grpc.WithTransportCredentials(credentials.NewTLS(clientTLS(nil))), codes.Unavailable},
		{"client certificate of another CA", grpc.WithTransportCredentials(credentials.NewTLS(clientTLS(other))), codes.Unavailable},
		{"plain text", grpc.WithTransportCredentials(insecure.NewCredentials()), codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, ts.addr, tt.giveOpt)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if code, _ := statusOf(err); code != tt.wantCode {
				t.Errorf("health Check with %s: code %v, want %v (%v)", tt.name, code, tt.wantCode, err)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "ca")
	cert, key := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	certFile, keyFile := testpki.Write(t, dir, "s.crt", cert), testpki.Write(t, dir, "s.key", key)
	notPEM := testpki.Write(t, dir, "not.pem", []byte("hello"))
	tests := []struct {
		name              string
		giveCert, giveKey string
		giveClientCA      string
	}{
		{"no key", certFile, "", ""},
		{"missing file", filepath.Join(dir, "nope.crt"), keyFile, ""},
		{"client CA not PEM", certFile, keyFile, notPEM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := TLSConfig(tt.giveCert, tt.giveKey, tt.giveClientCA); err == nil {
				t.Errorf("TLSConfig(%q, %q, %q) = nil error, want an error", tt.giveCert, tt.giveKey, tt.giveClientCA)
			}
		})
	}
}
