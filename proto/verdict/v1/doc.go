// Package verdictv1 is the Verdict decision API, version 1: the
// DecisionService (Evaluate, EvaluateStream, ListPolicies, GetPolicy) and
// its messages, generated from verdict.proto by `make proto` (buf with
// protoc-gen-go and protoc-gen-go-grpc). The generated files are committed;
// edit verdict.proto, never the .pb.go files.
//
// Start at EvaluateRequest and EvaluateResponse. Validate methods
// (validate.go, hand-written) check the shape of requests without decoding
// their JSON; the server runs them and clients may run them before
// sending.
//
// This package depends only on protobuf and gRPC, never on other packages
// of this module: it is the one set of types that crosses a process
// boundary.
package verdictv1
