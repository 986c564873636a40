package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority that signs certificates for tests.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate: the bundle that trusts what it signs.
	PEM []byte
}

var serial atomic.Int64

// NewCA makes a CA named name, valid from an hour ago for two hours.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue returns a certificate signed by ca for name with usage
// (x509.ExtKeyUsageServerAuth: for 127.0.0.1 and localhost too) and its
// private key, both in PEM.
func (ca *CA) Issue(tb testing.TB, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	tb.Helper()
	key := newKey(tb)
	tmpl := template(name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyPEM(tb, key)
}

// template is a certificate for name with a new serial number, valid
// from an hour ago for two hours.
func template(name string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
}

// Key returns a new P-256 private key in PEM.
func Key(tb testing.TB) []byte {
	tb.Helper()
	return KeyPEM(tb, newKey(tb))
}

// KeyPEM returns key in PEM.
func KeyPEM(tb testing.TB, key *ecdsa.PrivateKey) []byte {
	tb.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// Write writes data to the file name of dir and returns its path.
func Write(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Files are the paths of the PEM files WriteFiles writes.
type Files struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// WriteFiles writes a new CA (ca.crt), a server certificate for 127.0.0.1
// and localhost (server.crt, server.key) and a client certificate
// (client.crt, client.key) it signs into dir.
func WriteFiles(tb testing.TB, dir string) Files {
	tb.Helper()
	ca := NewCA(tb, "test CA")
	f := Files{CA: Write(tb, dir, "ca.crt", ca.PEM)}
	cert, key := ca.Issue(tb, "server", x509.ExtKeyUsageServerAuth)
	f.ServerCert, f.ServerKey = Write(tb, dir, "server.crt", cert), Write(tb, dir, "server.key", key)
	cert, key = ca.Issue(tb, "client", x509.ExtKeyUsageClientAuth)
	f.ClientCert, f.ClientKey = Write(tb, dir, "client.crt", cert), Write(tb, dir, "client.key", key)
	return f
}
