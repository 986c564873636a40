package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// proc is a verdict command running in the test process.
type proc struct {
	cancel context.CancelFunc
	done   chan int
	mu     sync.Mutex
	stderr bytes.Buffer
}

// stop ends the command (like Ctrl-C) and returns its exit code.
func (p *proc) stop(t *testing.T) int {
	t.Helper()
	p.cancel()
	select {
	case c := <-p.done:
		p.done <- c
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("command did not stop within 30s")
		return -1
	}
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *proc) errOutput() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// startCmd runs a verdict command line until the test ends; when addrRE
// is set, it waits for stdout to match it and returns its first group.
func startCmd(t *testing.T, addrRE *regexp.Regexp, args ...string) (*proc, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{cancel: cancel, done: make(chan int, 1)}
	outR, outW := io.Pipe()
	go func() {
		p.done <- run(ctx, args, outW, p)
		outW.Close()
	}()
	t.Cleanup(func() { p.stop(t) })
	if addrRE == nil {
		go io.Copy(io.Discard, outR)
		return p, ""
	}
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, outR)
			return p, m[1]
		}
	}
	t.Fatalf("verdict %v printed no address (stderr %q)", args, p.errOutput())
	return nil, ""
}

var writerAddrRE = regexp.MustCompile(`report writer on (127\.0\.0\.1:\d+)`)

// startReportsServe runs verdict reports serve on a loopback port with a
// new store and the extra flags, and returns its address.
func startReportsServe(t *testing.T, extra ...string) (*proc, string) {
	t.Helper()
	args := append([]string{"reports", "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--store", filepath.Join(t.TempDir(), "reports.db")}, extra...)
	return startCmd(t, writerAddrRE, args...)
}

// loopbackAddr returns a loopback address with a port free now.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// testPKI is a CA that signs certificates for the tests, written to dir.
type testPKI struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CA is the file of the CA certificate.
	CA string
}

func newTestPKI(t *testing.T, name string) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{dir: t.TempDir(), cert: cert, key: key}
	p.CA = p.write(t, "ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return p
}

func (p *testPKI) write(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue writes a certificate and key for a server on 127.0.0.1 or for a
// client, and returns their files.
func (p *testPKI) issue(t *testing.T, name string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		p.write(t, name+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// waitServing waits until the decision server at addr reports SERVING.
func waitServing(t *testing.T, addr string) {
	t.Helper()
	c, err := client.Dial(addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.CheckHealth(t.Context()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("server %s not SERVING after 10s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// plainToken sends a bearer token over plain text (tests only).
type plainToken string

func (t plainToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (plainToken) RequireTransportSecurity() bool { return false }

// publishOne publishes one evaluation on a new stream and returns the
// error of its acknowledgement.
func publishOne(t *testing.T, addr string, opts ...grpc.DialOption) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := verdictv1.NewReportServiceClient(conn).Publish(ctx)
	if err != nil {
		return err
	}
	ev := &verdictv1.ResourceEvaluation{
		Resource: &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", Uid: "u1"},
		Source:   verdictv1.ReportSource_REPORT_SOURCE_ADMISSION, Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:     timestamppb.Now(),
		Policies: []*verdictv1.PolicyVersion{{Kind: "ClusterPolicy", Name: "p", ContentHash: "h"}},
		Results:  []*verdictv1.RuleResult{{Policy: "p", Rule: "r", Result: verdictv1.Result_RESULT_PASS}},
	}
	if err := st.Send(&verdictv1.PublishRequest{Sequence: 1, Items: []*verdictv1.PublishItem{{Item: &verdictv1.PublishItem_Evaluation{Evaluation: ev}}}}); err != nil && err != io.EOF {
		return err
	}
	_, err = st.Recv()
	return err
}

// TestReportsServeToken starts the report writer with --token-file: a
// publisher without the token (or with another) is refused with
// UNAUTHENTICATED, one with it is acknowledged; health checks need none.
func TestReportsServeToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	writeTestFile(t, tokenFile, "# publishers\ns3cret\nother\n")
	clientToken := filepath.Join(dir, "token")
	writeTestFile(t, clientToken, "s3cret\n")
	p, addr := startReportsServe(t, "--token-file", tokenFile)
	plain := grpc.WithTransportCredentials(insecure.NewCredentials())
	tests := []struct {
		name string
		give []grpc.DialOption
		want codes.Code
	}{
		{"no token", []grpc.DialOption{plain}, codes.Unauthenticated},
		{"another token", []grpc.DialOption{plain, grpc.WithPerRPCCredentials(plainToken("guess"))}, codes.Unauthenticated},
		{"the token", []grpc.DialOption{plain, grpc.WithPerRPCCredentials(plainToken("s3cret"))}, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := publishOne(t, addr, tt.give...); status.Code(err) != tt.want {
				t.Errorf("Publish with %s = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
	conn, err := grpc.NewClient(addr, plain)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health Check without a token = %v, want nil", err)
	}
	if code, out, errOut := runCmd(t, "reports", "get", "-A", "--server", addr, "--token-file", clientToken); code != 0 || !strings.Contains(out, "cpol-p") {
		t.Errorf("reports get --token-file = exit %d, %q (stderr %q); want 0 and the report", code, out, errOut)
	}
	if code, _, errOut := runCmd(t, "reports", "get", "-A", "--server", addr); code != exitUsage || !strings.Contains(errOut, "Unauthenticated") {
		t.Errorf("reports get without a token = exit %d, stderr %q; want %d and Unauthenticated", code, errOut, exitUsage)
	}
	// Tokens over plain text are allowed, with a warning.
	if !strings.Contains(p.errOutput(), "bearer tokens travel in plain text") {
		t.Errorf("reports serve --token-file without TLS logged %q, want a warning about plain text", p.errOutput())
	}
}

// TestReportsServeMutualTLS starts the report writer with --tls-cert,
// --tls-key and --client-ca: a publisher with a client certificate of the
// CA is acknowledged, one without a certificate or with another CA's is
// refused.
func TestReportsServeMutualTLS(t *testing.T) {
	ca := newTestPKI(t, "verdict test CA")
	other := newTestPKI(t, "another CA")
	srvCert, srvKey := ca.issue(t, "writer", true)
	cliCert, cliKey := ca.issue(t, "publisher", false)
	badCert, badKey := other.issue(t, "intruder", false)
	_, addr := startReportsServe(t, "--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", ca.CA)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(readFile(t, ca.CA))
	creds := func(certFile, keyFile string) grpc.DialOption {
		cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if certFile != "" {
			c, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{c}
		}
		return grpc.WithTransportCredentials(credentials.NewTLS(cfg))
	}
	tests := []struct {
		name     string
		give     grpc.DialOption
		wantCode codes.Code
	}{
		{"client certificate of the CA", creds(cliCert, cliKey), codes.OK},
		{"no client certificate", creds("", ""), codes.Unavailable},
		{"client certificate of another CA", creds(badCert, badKey), codes.Unavailable},
		{"plain text", grpc.WithTransportCredentials(insecure.NewCredentials()), codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := publishOne(t, addr, tt.give); status.Code(err) != tt.wantCode {
				t.Errorf("Publish with %s = %v, want %v", tt.name, err, tt.wantCode)
			}
		})
	}
	if code, out, errOut := runCmd(t, "reports", "get", "-A", "--server", addr, "--ca-file", ca.CA, "--cert-file", cliCert, "--key-file", cliKey); code != 0 || !strings.Contains(out, "cpol-p") {
		t.Errorf("reports get with the client certificate = exit %d, %q (stderr %q); want 0 and the report", code, out, errOut)
	}
	if code, _, _ := runCmd(t, "reports", "get", "-A", "--server", addr, "--ca-file", ca.CA); code != exitUsage {
		t.Errorf("reports get without a client certificate = exit %d, want %d", code, exitUsage)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPublishersOverMutualTLS connects verdict serve and verdict scan to a
// report writer that requires a client certificate and a token, with the
// --report-writer-* flags; their results reach the reports.
func TestPublishersOverMutualTLS(t *testing.T) {
	ca := newTestPKI(t, "verdict test CA")
	srvCert, srvKey := ca.issue(t, "writer", true)
	cliCert, cliKey := ca.issue(t, "publisher", false)
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeTestFile(t, tokenFile, "s3cret\n")
	_, writer := startReportsServe(t, "--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", ca.CA, "--token-file", tokenFile)
	conn := []string{"--report-writer", writer, "--report-writer-ca-file", ca.CA, "--report-writer-cert-file", cliCert, "--report-writer-key-file", cliKey, "--report-writer-token-file", tokenFile}
	server := loopbackAddr(t)
	startCmd(t, nil, append([]string{"serve", "--policies", examplePolicies, "--listen", server, "--metrics-listen", "", "--log-level", "error"}, conn...)...)
	get := []string{"reports", "get", "-A", "--server", writer, "--ca-file", ca.CA, "--cert-file", cliCert, "--key-file", cliKey, "--token-file", tokenFile}
	pollVerdict(t, func(string) bool {
		code, _, _ := runVerdict(t, "eval", "--server", server, "-f", exampleResources)
		return code == 1 // served: the debug Pod is denied
	}, "version")
	want := []string{
		"NAMESPACE NAME PASS FAIL WARN ERROR SKIP",
		"shop cpol-disallow-latest-tag 4 0 0 0 0",
		"shop cpol-require-requests-limits 1 1 0 0 0",
		"shop cpol-require-team-label 2 0 0 0 0",
	}
	_, out, errOut := pollVerdict(t, func(out string) bool { return cmp.Equal(want, table(out)) }, get...)
	if diff := cmp.Diff(want, table(out)); diff != "" {
		t.Errorf("reports get -A after serve's evaluations mismatch (-want +got; stderr %q):\n%s", errOut, diff)
	}
	if code, _, errOut := runVerdict(t, append([]string{"scan", "--server", server, "-f", exampleResources}, conn...)...); code != 0 {
		t.Errorf("scan --report-writer over mTLS = exit %d (stderr %q), want 0", code, errOut)
	}
	// A token in plain text to a writer on another machine is refused.
	if code, _, errOut := runVerdict(t, "scan", "--server", server, "-f", exampleResources, "--report-writer", "192.0.2.1:50052", "--report-writer-token-file", tokenFile); code != exitUsage || !strings.Contains(errOut, "needs TLS") {
		t.Errorf("scan --report-writer-token-file to a remote writer without TLS = exit %d, stderr %q; want %d naming TLS", code, errOut, exitUsage)
	}
}

// TestReportsPolicyRemoved runs two decision servers publishing to one
// report writer, one with two policies and one with one of them (as
// during a rolling update to another --policies folder): the reports of
// the other policy stay while the first server runs, and go when it stops.
func TestReportsPolicyRemoved(t *testing.T) {
	_, writer := startReportsServe(t)
	both, one := t.TempDir(), t.TempDir()
	for _, f := range []string{"disallow-latest-tag.yaml", "require-team-label.yaml"} {
		b := readFile(t, filepath.Join(examplePolicies, f))
		writeTestFile(t, filepath.Join(both, f), string(b))
		if f == "disallow-latest-tag.yaml" {
			writeTestFile(t, filepath.Join(one, f), string(b))
		}
	}
	serve := func(dir string) (*proc, string) {
		server := loopbackAddr(t)
		p, _ := startCmd(t, nil, "serve", "--policies", dir, "--listen", server, "--metrics-listen", "", "--log-level", "error",
			"--report-writer", writer, "--report-policy-interval", "100ms")
		waitServing(t, server)
		return p, server
	}
	// names lists the reports of reports get -A: nil before the first
	// report (no table), while polling.
	names := func(out string) []string {
		rows := table(out)
		if len(rows) < 2 {
			return nil
		}
		var n []string
		for _, row := range rows[1:] {
			if f := strings.Fields(row); len(f) > 1 {
				n = append(n, f[1])
			}
		}
		return n
	}
	get := []string{"reports", "get", "-A", "--server", writer}
	old, server := serve(both)
	runVerdict(t, "eval", "--server", server, "-f", exampleResources)
	want := []string{"cpol-disallow-latest-tag", "cpol-require-team-label"}
	if _, out, _ := pollVerdict(t, func(out string) bool { return cmp.Equal(want, names(out)) }, get...); !cmp.Equal(want, names(out)) {
		t.Fatalf("reports of the server with both policies mismatch (-want +got):\n%s", cmp.Diff(want, names(out)))
	}
	// The other server evaluates nothing: an evaluation (of every policy
	// of its server) replaces the entries of the resource.
	serve(one)
	time.Sleep(time.Second) // ten policy intervals of both servers
	if _, out, _ := runVerdict(t, get...); !cmp.Equal(want, names(out)) {
		t.Errorf("reports while a server still has both policies mismatch (-want +got):\n%s", cmp.Diff(want, names(out)))
	}
	if code := old.stop(t); code != 0 {
		t.Fatalf("serve (both policies) exit %d, want 0 (stderr %q)", code, old.errOutput())
	}
	want = []string{"cpol-disallow-latest-tag"}
	if _, out, _ := pollVerdict(t, func(out string) bool { return cmp.Equal(want, names(out)) }, get...); !cmp.Equal(want, names(out)) {
		t.Errorf("reports after the server with both policies stopped mismatch (-want +got):\n%s", cmp.Diff(want, names(out)))
	}
}
