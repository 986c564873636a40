package scanner_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/scanner"
)

// generatingPolicy is a GeneratingPolicy on Namespaces, with
// generateExisting as given.
func generatingPolicy(name, existing string) string {
	return `apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata:
  name: ` + name + `
spec:
  evaluation:
    generateExisting:
      enabled: ` + existing + `
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [namespaces, namespaces/status]
  generate:
  - expression: generator.Apply(object.metadata.name, [])
`
}

// TestLoadGeneratingPolicies checks that a GeneratingPolicy with
// generateExisting replays the resources of its resourceRules (no
// subresources), and one without is not scanned.
func TestLoadGeneratingPolicies(t *testing.T) {
	ts := startServer(t, generatingPolicy("existing", "true"), generatingPolicy("admission-only", "false"))
	set, err := scanner.LoadPolicies(context.Background(), ts.client)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range set.GenerateExisting {
		for _, k := range p.Kinds {
			got = append(got, p.Key()+" "+k.String()+" "+p.Rules[0])
		}
	}
	if diff := cmp.Diff([]string{"existing core/v1/namespaces existing"}, got); diff != "" {
		t.Errorf("LoadPolicies generateExisting mismatch (-want +got):\n%s", diff)
	}
	if len(set.Background) != 0 {
		t.Errorf("LoadPolicies background = %v, want none (GeneratingPolicies have no background results)", set.Background)
	}
}
