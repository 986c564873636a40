package kyverno

import (
	"encoding/json"
	"fmt"

	"github.com/verdict-policy/verdict/engine"
)

// Schema is the part of a CRD's OpenAPI v3 schema that strict decoding
// checks: types, properties, items, additionalProperties and
// x-kubernetes-preserve-unknown-fields ("preserve"), as gen_schema.go
// writes it. Other packages that decode Kyverno kinds (engine/vpol) check
// their documents with it, so that every kind reports problems the same
// way.
type Schema = schemaNode

// ParseSchemas reads a JSON object of schemas by key, in gen_schema.go's
// format.
func ParseSchemas(data []byte) (map[string]*Schema, error) {
	var out map[string]*Schema
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("parse schemas: %w", err)
	}
	return out, nil
}

// CheckSchema returns every value of v (a JSON value: maps, slices,
// strings, float64, bool, nil) that s does not know or that has the wrong
// type, as errors with Code engine.CodeDecode and the field path below
// prefix ("spec.validations[0].expresion"), sorted by key within each
// object. null is accepted everywhere, as Kubernetes drops it.
func CheckSchema(v any, s *Schema, prefix string) engine.Errors {
	var errs engine.Errors
	checkSchema(v, s, prefix, &errs)
	return errs
}

// TypeError is the error of a value of the wrong type at path: "expected
// <want>, got <JSON type of got>", Code engine.CodeDecode.
func TypeError(path, want string, got any) *engine.Error {
	return typeError(path, want, got)
}

// JoinPath appends a field or map key to a field path as the decoders of
// this package write paths: ".name" for plain names, `["a/b"]` for keys
// with other characters.
func JoinPath(path, key string) string { return joinPath(path, key) }

// IndexPath appends a list index to a field path ("spec.rules[2]").
func IndexPath(path string, i int) string { return indexPath(path, i) }

// NewDocumentError wraps the error of the n-th document (1-based) of
// source, which starts at line, as DecodePolicies wraps its errors.
func NewDocumentError(source string, n, line int, err error) error {
	return docError(source, n, line, err)
}
