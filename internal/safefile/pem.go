package safefile

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// MaxPEMBytes bounds each file CertPool and KeyPair read: a CA bundle, a
// certificate chain or a private key in PEM (a system's whole CA bundle
// is about 220 KB).
const MaxPEMBytes = 4 << 20

// CertPool returns the PEM certificates of the file at path as a pool of
// trusted roots. A file that holds no PEM certificate is an error, as is
// one larger than MaxPEMBytes or one that is not a regular file.
func CertPool(path string) (*x509.CertPool, error) {
	pem, err := ReadFile(path, MaxPEMBytes)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return pool, nil
}

// KeyPair reads a PEM certificate chain and its private key, as
// tls.LoadX509KeyPair does, from regular files of at most MaxPEMBytes.
func KeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := ReadFile(certFile, MaxPEMBytes)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := ReadFile(keyFile, MaxPEMBytes)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
