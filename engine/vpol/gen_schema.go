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
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/internal/crdschema"
)

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
			if vm["served"] != true {
				continue
			}
			s := crdschema.Prune(vm["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any))
			props := s["properties"].(map[string]any)
			props["metadata"] = crdschema.ObjectMeta
			if _, ok := props["status"]; ok {
				props["status"] = map[string]any{"preserve": true}
			}
			out[kind+"/"+vm["name"].(string)] = s
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
