// Package client is the Go client of Verdict's decision service (the
// verdict.v1 DecisionService gRPC API): the webhook proxy, the scanner and
// any other Go service call the server through it.
//
// Start at Dial and Options. A Client holds one gRPC connection per
// server address and balances calls over them round-robin; with a
// "dns:///" target naming a headless Service, every replica's address is
// used and DNS changes are followed. Its service config retries unary
// calls that fail with UNAVAILABLE (a replica that is shutting down or
// still loading its policies) on the next address, and client-side health
// checking sends calls only to replicas that report SERVING. Every unary
// call gets a deadline (Options.Timeout) unless its context has one;
// keepalive pings find dead connections. TLS, mTLS (TLSConfig) and bearer
// tokens match the server's authentication options.
//
// The typed helpers:
//
//   - Evaluate sends an EvaluateRequest; EvaluateResource builds one from
//     a resource object and RequestOptions (Operation, OldObject,
//     Namespace, Background, Policies, InlinePolicies, ...), see
//     NewRequest.
//   - Scan sends many requests through EvaluateStream, in batches, with
//     bounded batches in flight (flow control), results delivered in
//     order with their ids, and a reconnect that resends unanswered
//     batches when a server goes away.
//   - FieldViolations reads the bad fields of an INVALID_ARGUMENT error.
//
// This package imports only the API (proto), its codec
// (internal/grpccodec), internal/safefile (the TLS files) and gRPC
// libraries: not the server, not the
// engine, and no Kubernetes client.
package client
