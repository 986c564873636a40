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
		"creationTimestamp":          map[string]any{"type": "string"},
		"deletionTimestamp":          map[string]any{"type": "string"},
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
			if vm["served"] != true {
				continue
			}
			s := prune(vm["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any))
			props := s["properties"].(map[string]any)
			props["metadata"] = objectMeta
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

func prune(s map[string]any) map[string]any {
	out := map[string]any{}
	if t, ok := s["type"]; ok {
		out["type"] = t
	}
	if f, ok := s["format"]; ok && (f == "int32" || f == "int64") {
		out["format"] = f
	}
	if s["x-kubernetes-preserve-unknown-fields"] == true {
		out["preserve"] = true
	}
	if p, ok := s["properties"].(map[string]any); ok {
		props := map[string]any{}
		for k, v := range p {
			props[k] = prune(v.(map[string]any))
		}
		out["properties"] = props
	}
	if it, ok := s["items"].(map[string]any); ok {
		out["items"] = prune(it)
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		out["additionalProperties"] = prune(ap)
	case bool:
		if ap {
			out["additionalProperties"] = map[string]any{"preserve": true}
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
