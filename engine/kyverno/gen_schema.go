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
	"maps"
	"os"
	"reflect"

	"github.com/verdict-policy/verdict/engine/internal/crdschema"
)

// objectMeta is crdschema.ObjectMeta with creationTimestamp and
// deletionTimestamp of any type (kept as written) in ClusterPolicies and
// Policies. As in Kyverno's CLI, an unknown field there is an error too.
func objectMeta() map[string]any {
	props := maps.Clone(crdschema.ObjectMeta["properties"].(map[string]any))
	props["creationTimestamp"] = map[string]any{"preserve": true}
	props["deletionTimestamp"] = map[string]any{"preserve": true}
	return map[string]any{"type": "object", "properties": props}
}

func main() {
	out := map[string]any{}
	for _, v := range crdschema.ReadCRDs(os.Args[1:]...) {
		props := v.Schema["properties"].(map[string]any)
		props["metadata"] = objectMeta()
		props["status"] = map[string]any{"preserve": true}
		if prev, ok := out[v.Name]; ok {
			if !reflect.DeepEqual(prev, v.Schema) {
				crdschema.Fail(fmt.Errorf("%s %s: schema differs from the other kind's", v.Kind, v.Name))
			}
			continue
		}
		out[v.Name] = v.Schema
	}
	crdschema.Print(out)
}
