// Package vpol reads Kyverno's ValidatingPolicy and
// NamespacedValidatingPolicy (policies.kyverno.io) and the
// policies.kyverno.io PolicyException.
//
// Read first: Document and ExceptionDocument (types.go), the kinds as
// written, with Kyverno's own spec types (github.com/kyverno/api); Decode,
// DecodePolicy, DecodeException and DecodeExceptions (decode.go).
//
// Decoding is strict, as for the kyverno.io kinds (engine/kyverno): each
// document is checked against the CRD schema of its version (schema.json,
// made by gen_schema.go from the CRDs), so an unknown field or a value of
// the wrong type is an *engine.Error with Code engine.CodeDecode and the
// field path. ValidatingPolicy is served in v1, v1beta1 and v1alpha1,
// NamespacedValidatingPolicy in v1 and v1beta1, PolicyException in all
// three, as the CRDs and Kyverno's CLI have them; another version is an
// error with Code engine.CodeUnsupported.
//
// The package does no I/O. It depends on engine, engine/kyverno (YAML
// splitting and the schema checker), Kyverno's API types and
// apimachinery; it must not import client-go, grpc or engine/eval.
package vpol
