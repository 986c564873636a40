// Package jsonquote writes a Go string as a JSON string the way the two
// encoders whose output Kyverno's results carry write it: encoding/json
// (json.Marshal, with HTML escaping) and json-iterator (Kyverno's
// variable substitution). Both escape quotes, backslashes, control
// characters, <, > and &, invalid UTF-8 (as \ufffd) and U+2028 and U+2029;
// they differ only in \b and \f, which encoding/json writes short and
// json-iterator as \u0008 and \u000c.
//
// AppendObject and AppendArray write the containers around the values
// an encoder writes itself (map keys sorted, as both encoders sort them).
//
// It imports only the standard library.
package jsonquote
