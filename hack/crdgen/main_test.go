package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpToDate regenerates the CRDs from the published files and compares
// them with the committed deploy/crds.
func TestUpToDate(t *testing.T) {
	const (
		schemas       = "../../../shared/kyverno-docs/crds/schemas"
		policySchemas = "../../../shared/kyverno-docs/crds/schemas-policies.kyverno.io"
		openreports   = "../../../shared/kyverno-docs/crds/openreports.io"
	)
	for _, dir := range []string{schemas, policySchemas, openreports} {
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("published CRD files not found (%v): the committed deploy/crds are not compared", err)
		}
	}
	files, err := Generate(schemas, policySchemas, openreports)
	if err != nil {
		t.Fatalf("Generate(%s, %s, %s) = %v", schemas, policySchemas, openreports, err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("../../deploy/crds", name))
		if err != nil {
			t.Errorf("deploy/crds/%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/crds/%s is not what go run ./hack/crdgen writes", name)
		}
	}
}

func TestStripDescriptions(t *testing.T) {
	give := map[string]any{
		"description": "root",
		"type":        "object",
		"properties": map[string]any{
			"description": map[string]any{"type": "string", "description": "a property named description"},
			"list":        map[string]any{"type": "array", "items": map[string]any{"type": "string", "description": "item"}},
		},
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description": map[string]any{"type": "string"},
			"list":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	}
	stripDescriptions(give)
	if diff := cmp.Diff(want, give); diff != "" {
		t.Errorf("stripDescriptions (-want +got):\n%s", diff)
	}
}

func TestConvertRejects(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{"not a CRD", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"},
		{"old API", "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n"},
		{"no versions", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {}\n"},
		{"no schema", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {versions: [{name: v1}]}\n"},
	}
	for _, tt := range tests {
		if _, err := convert([]byte(tt.give), header); err == nil {
			t.Errorf("convert(%s) = nil error, want an error", tt.name)
		}
	}
}
