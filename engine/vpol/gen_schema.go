//go:build ignore

// gen_schema writes schema.json: the structure (types, properties, items,
// additionalProperties, x-kubernetes-preserve-unknown-fields) of the
// policies.kyverno.io CRD schemas this package decodes, by kind and
// version, in engine/kyverno's Schema format. Run from the repository
// root:
//
//	go run ./engine/vpol/gen_schema.go \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_validatingpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_namespacedvalidatingpolicies.yaml \
//	    ../shared/kyverno-docs/crds/schemas-policies.kyverno.io/policies.kyverno.io_policyexceptions.yaml > engine/vpol/schema.json
package main

import (
	"os"

	"github.com/verdict-policy/verdict/engine/internal/crdschema"
)

func main() {
	out := map[string]any{}
	for _, v := range crdschema.ReadCRDs(os.Args[1:]...) {
		if !v.Served {
			continue
		}
		props := v.Schema["properties"].(map[string]any)
		props["metadata"] = crdschema.ObjectMeta
		if _, ok := props["status"]; ok {
			props["status"] = map[string]any{"preserve": true}
		}
		out[v.Kind+"/"+v.Name] = v.Schema
	}
	crdschema.Print(out)
}
