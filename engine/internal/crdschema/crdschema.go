package crdschema

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// ObjectMeta is the schema of metav1.ObjectMeta, in the pruned format. As
// in Kyverno's CLI, an unknown field there is an error too.
var ObjectMeta = map[string]any{
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

// Prune returns the structure of an OpenAPI v3 schema: its type, an
// int32 or int64 format, properties, items, additionalProperties (true is
// a value of any kind) and x-kubernetes-preserve-unknown-fields (as
// "preserve"), recursively. Everything else (descriptions, enums,
// validations) is dropped.
func Prune(s map[string]any) map[string]any {
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
			props[k] = Prune(v.(map[string]any))
		}
		out["properties"] = props
	}
	if it, ok := s["items"].(map[string]any); ok {
		out["items"] = Prune(it)
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		out["additionalProperties"] = Prune(ap)
	case bool:
		if ap {
			out["additionalProperties"] = map[string]any{"preserve": true}
		}
	}
	return out
}

// Version is one version of a CRD: the kind, the version's name, whether
// it is served, and its openAPIV3Schema pruned (Prune).
type Version struct {
	Kind   string
	Name   string
	Served bool
	Schema map[string]any
}

// ReadCRDs reads the versions of the CustomResourceDefinitions in files,
// in order, as the generators read their arguments; an error ends the
// program (Fail).
func ReadCRDs(files ...string) []Version {
	var out []Version
	for _, file := range files {
		versions, err := readCRD(file)
		if err != nil {
			Fail(err)
		}
		out = append(out, versions...)
	}
	return out
}

// readCRD reads the versions of the CustomResourceDefinition in file.
func readCRD(file string) ([]Version, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Names    struct{ Kind string }
			Versions []struct {
				Name   string
				Served bool
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []Version
	for _, v := range crd.Spec.Versions {
		out = append(out, Version{Kind: crd.Spec.Names.Kind, Name: v.Name, Served: v.Served, Schema: Prune(v.Schema.OpenAPIV3Schema)})
	}
	return out, nil
}

// Print writes out as JSON on standard output, as the generators write
// their schema.json; an error ends the program (Fail).
func Print(out any) {
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		Fail(err)
	}
}

// Fail prints err on standard error and ends the program with status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
