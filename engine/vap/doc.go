// Package vap reads Kubernetes' ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io), which
// Kyverno's CLI evaluates and Kyverno's background scans report on, with
// the results of Kyverno v1.19 (pkg/admissionpolicy).
//
// Read first: Document and BindingDocument (types.go), the kinds as
// written with Kubernetes' own spec types (k8s.io/api); Decode,
// DecodeBindings, DecodePolicy and DecodeBinding (decode.go).
//
// # Decoding
//
// Strict, as for the other kinds: each document is checked against the
// schema of its Go type (schema.json, made by gen_schema.go from
// k8s.io/api's types with engine/internal/crdschema), so an unknown field
// or a value of the wrong type is an *engine.Error with Code
// engine.CodeDecode and the field path. Both kinds are read at v1 only, as
// Kyverno's CLI loads them; another version is an error with Code
// engine.CodeUnsupported.
//
// The package does no I/O. It depends on engine, engine/kyverno (YAML
// splitting and the schema checker), Kubernetes' API types and
// apimachinery; it must not import client-go, grpc, engine/policy or
// engine/eval.
package vap
