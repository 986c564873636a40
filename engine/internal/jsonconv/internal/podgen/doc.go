// Command podgen writes pod_gen.go of package jsonconv: plain Go functions
// that store a value of the generic JSON form into corev1.Pod and every
// type it reaches, with the rules of jsonconv's reflection converter
// (store in convert.go) decided once per type here instead of once per
// value at run time. Each generated store<Type> function does what
// store does for that type, in the same order: null, pointer, json.Unmarshaler,
// encoding.TextUnmarshaler, then the kind; a value store would refuse is
// refused with errFallback, so that DecodePod falls back to the JSON round
// trip exactly where Decode does.
//
//	go generate ./engine/internal/jsonconv            # from the repository root
//	go run ./engine/internal/jsonconv/internal/podgen -o engine/internal/jsonconv/pod_gen.go
//
// The struct field names come from internal/layout, the same code the
// reflection converter reads them with.
package main
