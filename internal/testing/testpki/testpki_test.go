package testpki_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"

	"github.com/verdict-policy/verdict/internal/testing/testpki"
)

func TestWriteFiles(t *testing.T) {
	f := testpki.WriteFiles(t, t.TempDir())
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no PEM certificate", f.CA)
	}
	tests := []struct {
		name, cert, key string
		usage           x509.ExtKeyUsage
		host            string
	}{
		{name: "server for 127.0.0.1", cert: f.ServerCert, key: f.ServerKey, usage: x509.ExtKeyUsageServerAuth, host: "127.0.0.1"},
		{name: "server for localhost", cert: f.ServerCert, key: f.ServerKey, usage: x509.ExtKeyUsageServerAuth, host: "localhost"},
		{name: "client", cert: f.ClientCert, key: f.ClientKey, usage: x509.ExtKeyUsageClientAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pair, err := tls.LoadX509KeyPair(tt.cert, tt.key)
			if err != nil {
				t.Fatalf("LoadX509KeyPair(%s, %s) error = %v, want nil", tt.cert, tt.key, err)
			}
			leaf, err := x509.ParseCertificate(pair.Certificate[0])
			if err != nil {
				t.Fatal(err)
			}
			opts := x509.VerifyOptions{Roots: roots, DNSName: tt.host, KeyUsages: []x509.ExtKeyUsage{tt.usage}}
			if _, err := leaf.Verify(opts); err != nil {
				t.Errorf("Verify(%s) error = %v, want nil", tt.cert, err)
			}
		})
	}
}
