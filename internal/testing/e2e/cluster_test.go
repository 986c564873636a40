package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStartSkipsWithoutBinaries(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	var skipped bool
	t.Run("start", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Start(t, Options{})
		t.Error("Start returned without the binaries")
	})
	if !skipped {
		t.Error("Start did not skip the test without the binaries")
	}
}

func TestBinDir(t *testing.T) {
	t.Setenv(BinDirEnv, "")
	got, err := BinDir()
	if err != nil {
		t.Fatalf("BinDir: %v", err)
	}
	if !strings.HasSuffix(got, "/bin/e2e") {
		t.Errorf("BinDir() = %q, want the repository's bin/e2e", got)
	}
	if _, err := os.Stat(strings.TrimSuffix(got, "bin/e2e") + "go.mod"); err != nil {
		t.Errorf("BinDir() = %q, not next to go.mod: %v", got, err)
	}
	t.Setenv(BinDirEnv, "/somewhere/else")
	got, err = BinDir()
	if diff := cmp.Diff("/somewhere/else", got); diff != "" || err != nil {
		t.Errorf("BinDir() with %s set = %q, %v (-want +got):\n%s", BinDirEnv, got, err, diff)
	}
}

func TestWriteAPIServerFiles(t *testing.T) {
	f, err := writeAPIServerFiles(t.TempDir())
	if err != nil {
		t.Fatalf("writeAPIServerFiles: %v", err)
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		t.Fatalf("serving key pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(f.caPEM) {
		t.Fatal("caPEM holds no certificate")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("serving certificate for %s: %v", host, err)
		}
	}
	sa, err := os.ReadFile(f.saKey)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(sa); b == nil {
		t.Error("service-account key is not PEM")
	} else if _, err := x509.ParseECPrivateKey(b.Bytes); err != nil {
		t.Errorf("service-account key: %v", err)
	}
	tokens, err := os.ReadFile(f.tokens)
	if err != nil {
		t.Fatal(err)
	}
	want := f.token + "," + AdminUser + "," + AdminUser + "-uid,\"system:masters\"\n"
	if diff := cmp.Diff(want, string(tokens)); diff != "" {
		t.Errorf("token file (-want +got):\n%s", diff)
	}
}
