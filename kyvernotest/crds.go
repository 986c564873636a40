package kyvernotest

import (
	"strings"

	"github.com/verdict-policy/verdict/engine/mpol"
)

// crdSchemas makes the types of the CustomResourceDefinitions a test's
// clusterResources name (crdSchemasOf), which the ApplyConfigurations of
// MutatingPolicies merge custom resources with. nil when the test names no
// CRD.
func (r *runner) crdSchemas(t *Test, full func(string) string) (*mpol.Schemas, error) {
	var paths []string
	for _, p := range t.ClusterResources {
		cr, err := r.load.clusterResources(full(p))
		if err != nil {
			return nil, err
		}
		for _, c := range cr.Spec.CRDs {
			if strings.TrimSpace(c) != "" {
				paths = append(paths, full(c))
			}
		}
	}
	return r.load.crdSchemasOf(paths) // applyextras.go
}
