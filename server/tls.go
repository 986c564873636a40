package server

import (
	"crypto/tls"

	"github.com/verdict-policy/verdict/internal/grpcauth"
)

// TLSConfig returns a server TLS configuration with the certificate and key
// of certFile and keyFile (PEM). When clientCAFile is set, clients must
// present a certificate signed by one of its CAs (mTLS); the handshake of
// any other client fails. It is grpcauth.ServerTLS, which the report
// writer uses too.
func TLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	return grpcauth.ServerTLS(certFile, keyFile, clientCAFile)
}
