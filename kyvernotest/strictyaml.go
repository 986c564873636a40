package kyvernotest

import (
	"bytes"
	"encoding/json"
	"math"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// unmarshalStrict is sigs.k8s.io/yaml.UnmarshalStrict(data, v), the way
// Kyverno's CLI reads its test, values and user info files, with a fast
// path: the document read by the fast YAML parser (kyverno.ParseDocument),
// written as JSON and decoded strictly. sigs.k8s.io/yaml writes the same
// JSON for it, with two exceptions: a number or boolean for a string field
// becomes a string there (here the JSON decoder refuses it: the slow path
// then decodes the document), and an integer keeps its 64 bits there (the
// fast path takes only the documents whose integers are below 2^53, exact
// in a float64). Any document the fast path cannot decode is decoded by
// yaml.UnmarshalStrict into an untouched v, so errors are its own.
func unmarshalStrict[T any](data []byte, v *T) error {
	if fastUnmarshalStrict(data, v) {
		return nil
	}
	return yaml.UnmarshalStrict(data, v)
}

// fastUnmarshalStrict is unmarshalStrict's fast path: false, with v
// untouched, when it cannot decode data.
func fastUnmarshalStrict[T any](data []byte, v *T) bool {
	doc, ok := kyverno.ParseDocument(string(data))
	if !ok || !exactNumbers(doc) {
		return false
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var out T
	if dec.Decode(&out) != nil || dec.More() {
		return false
	}
	*v = out
	return true
}

// maxExact is 2^53: every integer of smaller magnitude is exact in a
// float64.
const maxExact = 1 << 53

// exactNumbers reports whether every number of the JSON value v that is
// an integer has a magnitude below maxExact.
func exactNumbers(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != math.Trunc(x) || math.Abs(x) < maxExact
	case map[string]any:
		for _, e := range x {
			if !exactNumbers(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !exactNumbers(e) {
				return false
			}
		}
	}
	return true
}
