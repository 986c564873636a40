//go:build ignore

// gen_builtins writes builtins.yaml: the structured-merge-diff schema of
// Kubernetes' built-in kinds and the kind each type is, from the OpenAPI
// v3 documents Kyverno's CLI merges ApplyConfigurations with (the
// Kubernetes 1.32 documents kubectl-validate embeds,
// openapiclient.NewHardcodedBuiltins("1.32")), converted as the API
// server's type converter converts them (managedfields.NewTypeConverter:
// kube-openapi's schemaconv, unknown fields not preserved). Run from the
// repository root:
//
//	go run ./engine/mpol/gen_builtins.go \
//	    "$(go env GOMODCACHE)/sigs.k8s.io/kubectl-validate@v0.0.5-0.20260105161640-a97ccfaca20b/pkg/openapiclient/builtins/1.32" > engine/mpol/builtins.yaml
//
// A kind is listed for its group and version only when the document of
// that group and version declares it, as Kyverno's type converter
// manager finds it (one converter per group and version). A model that
// two documents declare differently stops the generation: the schemas
// are merged into one.
package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v2"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// output is the file: YAML, as structured-merge-diff's schema types
// are written (their yaml tags; JSON would lose the fields their
// embedded atoms share).
type output struct {
	// Kinds maps "group/version/Kind" ("v1/Pod" for the core group) to
	// the name of its type.
	Kinds map[string]string   `yaml:"kinds"`
	Types []smdschema.TypeDef `yaml:"types"`
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: gen_builtins.go BUILTINS_DIR"))
	}
	root := os.Args[1]
	models := map[string]*spec.Schema{}
	out := output{Kinds: map[string]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		rel, _ := filepath.Rel(root, strings.TrimSuffix(path, ".json"))
		gv := strings.TrimPrefix(strings.TrimPrefix(filepath.ToSlash(rel), "apis/"), "api/")
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if doc.Components == nil {
			return nil
		}
		for name, s := range doc.Components.Schemas {
			if prev, ok := models[name]; ok {
				if !reflect.DeepEqual(prev, s) {
					return fmt.Errorf("%s: model %s differs from another document's", path, name)
				}
				continue
			}
			models[name] = s
			for _, gvk := range kindsOf(s) {
				if gvk[0] == "" && gvk[1] == gv || gvk[0]+"/"+gvk[1] == gv {
					out.Kinds[gv+"/"+gvk[2]] = name
				}
			}
		}
		return nil
	})
	if err != nil {
		fail(err)
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		fail(err)
	}
	// schemaconv lists fields as it meets them: sorted, the file is the
	// same each time it is made (the order means nothing to a merge).
	out.Types = s.Types
	sort.Slice(out.Types, func(i, j int) bool { return out.Types[i].Name < out.Types[j].Name })
	for _, t := range out.Types {
		if t.Map != nil {
			sort.Slice(t.Map.Fields, func(i, j int) bool { return t.Map.Fields[i].Name < t.Map.Fields[j].Name })
		}
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(b)
}

// kindsOf returns the group, version and kind of each
// x-kubernetes-group-version-kind of a model.
func kindsOf(s *spec.Schema) [][3]string {
	list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	var out [][3]string
	for _, e := range list {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" {
			out = append(out, [3]string{g, v, k})
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
