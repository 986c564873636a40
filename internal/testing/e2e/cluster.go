package e2e

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
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Binary names in BinDir.
const (
	APIServerBinary = "kube-apiserver"
	EtcdBinary      = "etcd"
)

// BinDirEnv names the environment variable that overrides BinDir.
const BinDirEnv = "VERDICT_E2E_BIN"

// Defaults of Options.
const (
	DefaultReadyTimeout       = 90 * time.Second
	DefaultServiceClusterCIDR = "10.0.0.0/24"
)

// AdminUser is the user of Cluster.Config, in group system:masters.
const AdminUser = "verdict-e2e-admin"

// Options configure Start. The zero value is usable.
type Options struct {
	// ReadyTimeout bounds the wait for etcd and then for the apiserver's
	// /readyz. Default DefaultReadyTimeout (90 s).
	ReadyTimeout time.Duration

	// ServiceClusterIPRange is --service-cluster-ip-range. Default
	// DefaultServiceClusterCIDR.
	ServiceClusterIPRange string

	// APIServerArgs are appended to the apiserver's flags (a later flag
	// wins), e.g. "--feature-gates=...".
	APIServerArgs []string
}

// Cluster is a running etcd and kube-apiserver.
type Cluster struct {
	// Config reaches the apiserver as AdminUser (bearer token), trusting
	// its serving CA. Copy it (rest.CopyConfig) before changing it.
	Config *rest.Config
	// URL is the apiserver's base URL, https://127.0.0.1:<port>.
	URL string
	// EtcdURL is etcd's client URL, http://127.0.0.1:<port>.
	EtcdURL string
	// Dir holds the generated certificates, keys, data and logs.
	Dir string
}

// BinDir returns the folder of the e2e binaries: $VERDICT_E2E_BIN when
// set, else bin/e2e under the repository root found from the working
// directory (a go test runs in its package's folder).
func BinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/verdict-policy/verdict\n")) {
			return filepath.Join(dir, "bin", "e2e"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no Verdict go.mod above the working directory; set %s", BinDirEnv)
		}
		dir = parent
	}
}

// Start runs etcd and kube-apiserver for t and returns once /readyz
// answers ok. It skips t when the binaries are not built and fails it
// when they do not start. Everything is stopped when t ends.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		t.Skipf("e2e binaries: %v", err)
	}
	for _, name := range []string{EtcdBinary, APIServerBinary} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Skipf("e2e binary %s not built (run make e2e-bins): %v", name, err)
		}
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.ServiceClusterIPRange == "" {
		opts.ServiceClusterIPRange = DefaultServiceClusterCIDR
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), opts.ReadyTimeout)
	defer cancel()

	etcdURL, err := startEtcd(t, filepath.Join(bin, EtcdBinary), dir)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	if err := waitHTTP(ctx, http.DefaultClient, etcdURL+"/health", ""); err != nil {
		t.Fatalf("etcd not healthy: %v", err)
	}

	files, err := writeAPIServerFiles(dir)
	if err != nil {
		t.Fatalf("apiserver files: %v", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + files.cert,
		"--tls-private-key-file=" + files.key,
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--token-auth-file=" + files.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + files.saKey,
		"--service-account-signing-key-file=" + files.saKey,
		"--service-cluster-ip-range=" + opts.ServiceClusterIPRange,
		"--profiling=false",
	}
	args = append(args, opts.APIServerArgs...)
	if err := startProcess(t, filepath.Join(bin, APIServerBinary), args, filepath.Join(dir, "kube-apiserver.log")); err != nil {
		t.Fatalf("kube-apiserver: %v", err)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(files.caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	if err := waitHTTP(ctx, hc, url+"/readyz", files.token); err != nil {
		t.Fatalf("kube-apiserver not ready: %v", err)
	}
	return &Cluster{
		Config: &rest.Config{
			Host:            url,
			BearerToken:     files.token,
			TLSClientConfig: rest.TLSClientConfig{CAData: files.caPEM},
			QPS:             50,
			Burst:           100,
		},
		URL:     url,
		EtcdURL: etcdURL,
		Dir:     dir,
	}
}

func startEtcd(t testing.TB, path, dir string) (string, error) {
	client, err := freePort()
	if err != nil {
		return "", err
	}
	peer, err := freePort()
	if err != nil {
		return "", err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	args := []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	return clientURL, startProcess(t, path, args, filepath.Join(dir, "etcd.log"))
}

// startProcess runs path with args, its output in logFile, until t ends;
// then it stops it and, when t failed, prints the end of the log.
func startProcess(t testing.TB, path string, args []string, logFile string) error {
	f, err := os.Create(logFile)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		f.Close()
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", filepath.Base(logFile), tail(logFile, 40))
		}
	})
	return nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// waitHTTP polls url until it answers 200 or ctx ends.
func waitHTTP(ctx context.Context, hc *http.Client, url, token string) error {
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body := make([]byte, 512)
			k, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s: %s", url, resp.Status, body[:k])
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// apiServerFiles are the generated inputs of the apiserver.
type apiServerFiles struct {
	cert, key, saKey, tokens string
	caPEM                    []byte
	token                    string
}

// writeAPIServerFiles generates a CA and a serving certificate for
// 127.0.0.1 and localhost, a service-account key and a token file with
// AdminUser, into dir.
func writeAPIServerFiles(dir string) (apiServerFiles, error) {
	var f apiServerFiles
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "verdict e2e CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, fmt.Errorf("CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("serving certificate: %w", err)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return f, err
	}
	f = apiServerFiles{
		cert:   filepath.Join(dir, "apiserver.crt"),
		key:    filepath.Join(dir, "apiserver.key"),
		saKey:  filepath.Join(dir, "sa.key"),
		tokens: filepath.Join(dir, "tokens.csv"),
		caPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		token:  hex.EncodeToString(tok),
	}
	keyPEM, err := ecKeyPEM(key)
	if err != nil {
		return f, err
	}
	saPEM, err := ecKeyPEM(saKey)
	if err != nil {
		return f, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	// token,user,uid,"group1,group2"
	tokens := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", f.token, AdminUser, AdminUser)
	for path, data := range map[string][]byte{
		f.cert:   certPEM,
		f.key:    keyPEM,
		f.saKey:  saPEM,
		f.tokens: []byte(tokens),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, err
		}
	}
	return f, nil
}

func ecKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("EC key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
