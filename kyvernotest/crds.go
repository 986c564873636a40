package kyvernotest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/verdict-policy/verdict/engine/mpol"
)

// crdSchemas makes the types of the CustomResourceDefinitions a test's
// clusterResources name, which the ApplyConfigurations of MutatingPolicies
// merge custom resources with, as Kyverno's CLI finds them
// (PolicyProcessor.openAPI): each CRD path names its folder (a file, the
// folder it is in), whose YAML and JSON files (not recursively) are read
// whole, and every CustomResourceDefinition document of them is used; the
// other documents are skipped. nil when the test names no CRD.
func (r *runner) crdSchemas(t *Test, full func(string) string) (*mpol.Schemas, error) {
	var dirs []string
	seen := map[string]bool{}
	for _, p := range t.ClusterResources {
		cr, err := r.load.clusterResources(full(p))
		if err != nil {
			return nil, err
		}
		for _, c := range cr.Spec.CRDs {
			if strings.TrimSpace(c) == "" {
				continue
			}
			dir := full(c)
			if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
				dir = filepath.Dir(dir)
			}
			if !seen[dir] {
				seen[dir] = true
				dirs = append(dirs, dir)
			}
		}
	}
	var crds []map[string]any
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			// Kyverno's CLI reads no CRD from a folder it cannot list.
			continue
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if ok, err := r.load.regularEntry(path); err != nil {
				return nil, fmt.Errorf("load CRDs: %w", err)
			} else if !ok {
				continue
			}
			objs, err := r.load.readObjects(path)
			if err != nil {
				return nil, fmt.Errorf("load CRDs: %w", err)
			}
			for _, o := range objs {
				m := o.Value
				apiVersion, _ := m["apiVersion"].(string)
				if kind, _ := m["kind"].(string); kind != "CustomResourceDefinition" || !strings.HasPrefix(apiVersion, "apiextensions.k8s.io/") {
					continue
				}
				crds = append(crds, m)
			}
		}
	}
	if len(crds) == 0 {
		return nil, nil
	}
	s, err := mpol.NewSchemas(crds)
	if err != nil {
		return nil, fmt.Errorf("load CRDs: %w", err)
	}
	return s, nil
}
