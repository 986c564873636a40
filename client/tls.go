package client

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/verdict-policy/verdict/internal/safefile"
)

// TLSConfig returns a client TLS configuration. caFile (PEM) holds the CAs
// that sign the server's certificate; empty means the system's roots.
// certFile and keyFile (PEM), both or neither, are the client certificate
// presented to a server that requires one (mTLS). serverName overrides the
// name checked in the server's certificate (default: the host of the
// target).
func TLSConfig(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pool, err := safefile.CertPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("load CA: %w", err)
		}
		cfg.RootCAs = pool
	}
	switch {
	case certFile != "" && keyFile != "":
		cert, err := safefile.KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load client key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case certFile != "" || keyFile != "":
		return nil, errors.New("a client certificate needs both a certificate and a key file")
	}
	return cfg, nil
}
