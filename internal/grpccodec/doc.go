// Package grpccodec is the gRPC codec of Verdict's services: protobuf on
// the wire, as gRPC's default codec, but marshalled and unmarshalled by the
// reflection-free methods that protoc-gen-go-vtproto generates for the
// verdict.v1 messages (MarshalToSizedBufferVT, SizeVT, UnmarshalVTUnsafe), which
// cost a fraction of protobuf-go's reflection-driven code for the large
// responses of Evaluate and EvaluateStream. Messages without those methods
// (health, reflection, other services) go through gRPC's default codec.
// A client decodes an answer from one private copy of its bytes, which the
// strings of the decoded message share (UnmarshalVTUnsafe) instead of one
// allocation per string.
//
// Read first: Codec, ServerOption and DialOption. The codec is set per
// server and per connection, never registered globally, so other gRPC
// users of the process keep gRPC's codec.
//
// The package must not depend on the rest of Verdict: it knows messages
// only through the methods it looks for.
package grpccodec
