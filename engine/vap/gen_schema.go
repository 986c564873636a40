//go:build ignore

// gen_schema writes schema.json: the structure (types, properties, items,
// additionalProperties) of the admissionregistration.k8s.io kinds this
// package decodes, by kind and version, in engine/kyverno's Schema format.
// Kubernetes' types have no CRD: the schema is generated from the Go types
// the API server decodes them into (k8s.io/api), as an OpenAPI v3 schema
// pruned by engine/internal/crdschema like the CRDs of the other kinds.
// Run from the repository root:
//
//	go run ./engine/vap/gen_schema.go > engine/vap/schema.json
package main

import (
	"fmt"
	"reflect"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/internal/crdschema"
)

func main() {
	kinds := []struct {
		key  string
		spec reflect.Type
	}{
		{"ValidatingAdmissionPolicy/v1", reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicySpec]()},
		{"ValidatingAdmissionPolicyBinding/v1", reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec]()},
	}
	out := map[string]any{}
	for _, k := range kinds {
		s := crdschema.Prune(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"apiVersion": map[string]any{"type": "string"},
				"kind":       map[string]any{"type": "string"},
				"spec":       openAPI(k.spec),
			},
		})
		props := s["properties"].(map[string]any)
		props["metadata"] = crdschema.ObjectMeta
		if strings.HasPrefix(k.key, "ValidatingAdmissionPolicy/") {
			props["status"] = map[string]any{"preserve": true}
		}
		out[k.key] = s
	}
	crdschema.Print(out)
}

// openAPI is the OpenAPI v3 schema of a Go type as its JSON encoding has
// it: structs by their json tags (inline fields merged), pointers as
// their element, named string types as strings.
func openAPI(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": "array", "items": openAPI(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": openAPI(t.Elem())}
	case reflect.Interface:
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	case reflect.Struct:
		props := map[string]any{}
		addFields(t, props)
		return map[string]any{"type": "object", "properties": props}
	}
	panic(fmt.Sprintf("gen_schema: no schema for %s", t))
}

func addFields(t reflect.Type, props map[string]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (opts == "inline" || f.Anonymous) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			addFields(ft, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = openAPI(f.Type)
	}
}
