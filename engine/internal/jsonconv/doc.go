// Package jsonconv converts values of the generic JSON form the engine
// holds resources in (map[string]any, []any, string, float64, int64, bool,
// nil) into typed Go values, with exactly the result of a JSON round trip
// (json.Marshal, then json.Unmarshal into the type) but without building
// the bytes: podSecurity rules read the Kubernetes Pod types, and the
// round trip was most of their cost.
//
// Read first: Into (the converter; it refuses what it does not convert
// as json would) and Decode (Into with the round trip as the fallback,
// which also gives json's errors for invalid input). Equality with the
// round trip is what the tests and the fuzzers check.
//
// DecodePod (pod_gen.go, written by internal/podgen: go generate) is
// Decode[corev1.Pod] without reflection: one function per type the Pod
// reaches, in which the generator has already made the choices store
// makes for that type at run time (field names from the same
// internal/layout, custom unmarshalers, integer ranges). It falls back to
// the round trip exactly where Into does; the tests and FuzzDecodePod
// compare it with both, and internal/podgen's test fails when pod_gen.go
// is not what the generator writes. For IntOrString, Quantity and
// metav1.Time it first tries the hand-written paths of fast.go, which
// store the plain strings and integers without their UnmarshalJSON's
// JSON text (FuzzUnmarshalerFast compares them with it).
//
// Copy deep-copies a value of the generic JSON form.
//
// Like encoding/json it keeps a process-wide cache of type layouts
// (computed once per type, never changed). The reflection converter
// depends on the standard library only; the generated one on the
// Kubernetes types it converts.
package jsonconv

//go:generate go run ./internal/podgen -o pod_gen.go
