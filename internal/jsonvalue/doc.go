// Package jsonvalue decodes JSON into the generic form (map[string]any,
// []any, string, float64, bool, nil) with exactly the result of
// encoding/json's Unmarshal into an `any`, about twice as fast: the
// decision server and the webhook proxy decode every resource they
// evaluate.
//
// Read first: Decode and DecodeObject. The fast parser handles the common
// shapes (ASCII strings without escapes, ordinary numbers) and hands
// anything else — escapes, non-ASCII text, invalid input, extreme nesting
// — to encoding/json, so values and error messages are encoding/json's.
// The tests and the fuzzer compare the two.
//
// Depends on the standard library only.
package jsonvalue
