// Package mpol reads, compiles and evaluates Kyverno's MutatingPolicy and
// NamespacedMutatingPolicy (policies.kyverno.io), with the results and
// patches of Kyverno v1.19 (pkg/cel/policies/mpol).
//
// Read first: Document (types.go), the kinds as written with Kyverno's
// own spec types (github.com/kyverno/api); Decode and DecodePolicy
// (decode.go).
//
// # Decoding
//
// Strict, as engine/vpol decodes its kinds (vpol.Kinds): each document is
// checked against the CRD schema of its version (schema.json, made by
// engine/vpol/gen_schema.go from the CRDs), so an unknown field or a
// value of the wrong type is an *engine.Error with Code engine.CodeDecode
// and the field path. MutatingPolicy is served in v1, v1beta1 and
// v1alpha1, NamespacedMutatingPolicy in v1 and v1beta1, as the CRDs and
// Kyverno's CLI have them; another version is an error with Code
// engine.CodeUnsupported.
//
// The package does no I/O. It depends on engine, engine/vpol,
// engine/kyvernocel, Kyverno's API types, cel-go and apimachinery; it
// must not import client-go, grpc, engine/policy or engine/eval.
package mpol
