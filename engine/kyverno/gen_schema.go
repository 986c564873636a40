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
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"sigs.k8s.io/yaml"

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
		b, err := os.ReadFile(file)
		if err != nil {
			fail(err)
		}
		var crd map[string]any
		if err := yaml.Unmarshal(b, &crd); err != nil {
			fail(err)
		}
		spec := crd["spec"].(map[string]any)
		kind := spec["names"].(map[string]any)["kind"].(string)
		for _, v := range spec["versions"].([]any) {
			vm := v.(map[string]any)
			s := crdschema.Prune(vm["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any))
			props := s["properties"].(map[string]any)
			props["metadata"] = objectMeta
			props["status"] = map[string]any{"preserve": true}
			key := vm["name"].(string)
			if prev, ok := out[key]; ok {
				if !reflect.DeepEqual(prev, s) {
					fail(fmt.Errorf("%s %s: schema differs from the other kind's", kind, key))
				}
				continue
			}
			out[key] = s
		}
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
