//go:build ignore

// gen_schema writes schema.json: the structure (types, properties, items,
// additionalProperties, x-kubernetes-preserve-unknown-fields) of the
// ClusterPolicy and Policy CRD schemas, per version, that strict decoding
// checks policies against. Run from the repository root:
//
//	go run ./engine/kyverno/gen_schema.go \
//	    ../shared/kyverno-docs/crds/schemas/kyverno.io_clusterpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas/kyverno.io_policies.yaml > engine/kyverno/schema.json
package main

import (
	"fmt"
	"os"
	"reflect"

	"github.com/verdict-policy/verdict/engine/internal/crdschema"
)

// objectMeta is metav1.ObjectMeta. As in Kyverno's CLI, an unknown field
// there is an error too.
var objectMeta = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":                       map[string]any{"type": "string"},
		"generateName":               map[string]any{"type": "string"},
		"namespace":                  map[string]any{"type": "string"},
		"selfLink":                   map[string]any{"type": "string"},
		"uid":                        map[string]any{"type": "string"},
		"resourceVersion":            map[string]any{"type": "string"},
		"generation":                 map[string]any{"type": "integer", "format": "int64"},
		"creationTimestamp":          map[string]any{"preserve": true},
		"deletionTimestamp":          map[string]any{"preserve": true},
		"deletionGracePeriodSeconds": map[string]any{"type": "integer", "format": "int64"},
		"labels":                     map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"annotations":                map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"ownerReferences":            map[string]any{"type": "array", "items": map[string]any{"preserve": true}},
		"finalizers":                 map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"managedFields":              map[string]any{"type": "array", "items": map[string]any{"preserve": true}},
	},
}

func main() {
	out := map[string]any{}
	for _, file := range os.Args[1:] {
		versions, err := crdschema.ReadCRD(file)
		if err != nil {
			crdschema.Fail(err)
		}
		for _, v := range versions {
			props := v.Schema["properties"].(map[string]any)
			props["metadata"] = objectMeta
			props["status"] = map[string]any{"preserve": true}
			if prev, ok := out[v.Name]; ok {
				if !reflect.DeepEqual(prev, v.Schema) {
					crdschema.Fail(fmt.Errorf("%s %s: schema differs from the other kind's", v.Kind, v.Name))
				}
				continue
			}
			out[v.Name] = v.Schema
		}
	}
	crdschema.Print(out)
}
