// Package crdschema turns OpenAPI v3 schemas into the schema format of
// engine/kyverno's strict decoder (kyverno.ParseSchemas, CheckSchema):
// only the structure (types, integer formats, properties, items,
// additionalProperties, x-kubernetes-preserve-unknown-fields) is kept.
//
// The schema generators of the engine (engine/kyverno/gen_schema.go,
// engine/vpol/gen_schema.go, engine/vap/gen_schema.go; `go run` programs,
// not built with the engine) share it. It imports nothing of this module.
package crdschema
