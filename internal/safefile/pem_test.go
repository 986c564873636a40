package safefile

import (
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/internal/testing/testpki"
)

// writePEM writes a certificate and its key to dir as cert.pem and
// key.pem, and the key of another certificate as other-key.pem.
func writePEM(t *testing.T, dir string) {
	t.Helper()
	cert, key := testpki.NewCA(t, "test CA").Issue(t, "test", x509.ExtKeyUsageServerAuth)
	testpki.Write(t, dir, "cert.pem", cert)
	testpki.Write(t, dir, "key.pem", key)
	testpki.Write(t, dir, "other-key.pem", testpki.Key(t))
}

func TestCertPool(t *testing.T) {
	dir := special(t)
	writePEM(t, dir)
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, MaxPEMBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		giveFile string
		wantErr  string // "" for none
		wantMode fs.FileMode
	}{
		{name: "certificate", giveFile: "cert.pem"},
		{name: "no PEM certificate", giveFile: "file.yaml", wantErr: "no PEM certificate"},
		{name: "a key is not a certificate", giveFile: "key.pem", wantErr: "no PEM certificate"},
		{name: "named pipe", giveFile: "fifo.yaml", wantErr: "not a regular file", wantMode: fs.ModeNamedPipe},
		{name: "larger than MaxPEMBytes", giveFile: "big.pem", wantErr: "larger than"},
		{name: "missing", giveFile: "none.pem", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := CertPool(filepath.Join(dir, tt.giveFile))
			checkErr(t, "CertPool", tt.giveFile, err, tt.wantErr, tt.wantMode)
			if tt.wantErr == "" && pool == nil {
				t.Errorf("CertPool(%s) = nil, want a pool", tt.giveFile)
			}
		})
	}
}

func TestKeyPair(t *testing.T) {
	dir := special(t)
	writePEM(t, dir)
	tests := []struct {
		name     string
		giveCert string
		giveKey  string
		wantErr  string
		wantMode fs.FileMode
	}{
		{name: "certificate and its key", giveCert: "cert.pem", giveKey: "key.pem"},
		{name: "key of another certificate", giveCert: "cert.pem", giveKey: "other-key.pem", wantErr: "private key does not match public key"},
		{name: "certificate from a named pipe", giveCert: "fifo.yaml", giveKey: "key.pem", wantErr: "not a regular file", wantMode: fs.ModeNamedPipe},
		{name: "key from a named pipe", giveCert: "cert.pem", giveKey: "fifo.yaml", wantErr: "not a regular file", wantMode: fs.ModeNamedPipe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert, err := KeyPair(filepath.Join(dir, tt.giveCert), filepath.Join(dir, tt.giveKey))
			checkErr(t, "KeyPair", tt.giveCert+", "+tt.giveKey, err, tt.wantErr, tt.wantMode)
			if tt.wantErr == "" && len(cert.Certificate) != 1 {
				t.Errorf("KeyPair(%s, %s) has %d certificates, want 1", tt.giveCert, tt.giveKey, len(cert.Certificate))
			}
		})
	}
}

func checkErr(t *testing.T, fn, give string, err error, wantErr string, wantMode fs.FileMode) {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("%s(%s) error = %v, want nil", fn, give, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("%s(%s) error = %v, want one containing %q", fn, give, err, wantErr)
	}
	if wantMode != 0 {
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Mode.Type() != wantMode {
			t.Errorf("%s(%s) error = %v, want a *NotRegularError of mode %v", fn, give, err, wantMode)
		}
	}
}
