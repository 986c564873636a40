// Package yamlenc writes JSON-shaped values (map[string]any, []any,
// string, float64, int64, int, bool, nil) as YAML, byte for byte as
// go.yaml.in/yaml/v3's Marshal writes them (four-space indentation, keys
// in yaml.v3's order, its choice of plain, single-quoted, double-quoted
// or literal block style for each string), but straight into a byte
// slice, without the yaml.Node tree, reflection and per-scalar events of
// yaml.v3: for a Pod, a fourteenth of the time and no allocations
// (BenchmarkMarshal).
//
// Read first: Append, which returns false for anything it does not
// write with certainty (other Go types; a string with invalid UTF-8 or a
// line break other than a line feed; a key with a line feed or longer
// than yaml.v3's 128-byte simple keys; keys whose order yaml.v3's
// comparison does not fix), and Marshal, which falls back to yaml.v3
// itself then. The tests and FuzzAppend compare Append with yaml.v3
// wherever it claims an input.
//
// It depends on the standard library and yaml.v3 (the fallback) only.
package yamlenc
