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
// round trip is what the tests and the fuzzer check.
//
// Like encoding/json it keeps a process-wide cache of type layouts
// (computed once per type, never changed). It must not depend on anything
// but the standard library.
package jsonconv
