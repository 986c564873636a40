// Package grpcauth holds what the gRPC services of Verdict (the decision
// server and the report writer) share to authenticate their callers:
// ServerTLS (a server TLS configuration, with client certificates
// required when a client CA is given: mTLS) and Tokens (bearer tokens
// checked by a unary and a stream interceptor; the standard health service
// is exempt, so that probes need no token).
//
// It imports gRPC, go-grpc-middleware and internal/safefile (which reads
// the TLS files) only; server and reportwriter use
// it, cmd/verdict builds it from the flags (--tls-cert, --tls-key,
// --client-ca, --token-file).
package grpcauth
