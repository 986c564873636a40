package grpcauth

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/verdict-policy/verdict/internal/safefile"
)

// ServerTLS returns a server TLS configuration with the certificate and
// key of certFile and keyFile (PEM). When clientCAFile is set, clients must
// present a certificate signed by one of its CAs (mTLS); the handshake of
// any other client fails.
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS needs both a certificate and a key file")
	}
	cert, err := safefile.KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS key pair: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pool, err := safefile.CertPool(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("load client CA: %w", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
