package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// configMaps serves n ConfigMaps of namespace apps to resource.List and
// to the listing of mutate-existing targets.
type configMaps int

func (n configMaps) items() []map[string]any {
	out := make([]map[string]any, int(n))
	for i := range out {
		out[i] = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "apps"}}
	}
	return out
}

func (n configMaps) GetResource(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, engine.ErrNotFound
}

func (n configMaps) ListResources(context.Context, string, string, string, map[string]string) (map[string]any, error) {
	var items []any
	for _, o := range n.items() {
		items = append(items, o)
	}
	return map[string]any{"items": items}, nil
}

func (n configMaps) PostResource(context.Context, string, string, string, map[string]any) (map[string]any, error) {
	return nil, engine.ErrNotFound
}

func (n configMaps) ListAllNamespaces(context.Context, string, string) ([]map[string]any, error) {
	return n.items(), nil
}

// TestMutateExistingMaxTargets: a trigger has at most mpol.MaxTargets
// targets, whether its policy lists them or its expression returns them;
// at the limit each is patched, over it the policy's result is an error
// that names the limit and nothing is patched.
func TestMutateExistingMaxTargets(t *testing.T) {
	const doc = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: label-all}
spec:
  evaluation:
    mutateExisting: {enabled: true}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}
  targetMatchConstraints: TARGETS
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"seen": "yes"}}}'
`
	forms := map[string]string{
		"listed":     `{resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}`,
		"expression": `{expression: 'resource.List("v1", "configmaps", "apps")'}`,
	}
	trigger := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "apps"}}
	for form, targets := range forms {
		docs, err := mpol.Policies.Decode("p.yaml", []byte(strings.Replace(doc, "TARGETS", targets, 1)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileMutating(docs[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{mpol.MaxTargets, mpol.MaxTargets + 1} {
			eng := eval.New(eval.Options{CELData: kyvernocel.Sources{Resources: configMaps(n)}})
			resp := eng.Evaluate(t.Context(), []*policy.Policy{p}, &eval.Request{Object: trigger, Mode: eval.Background, MutateExisting: true})
			wantPatches, wantErr := n, ""
			if n > mpol.MaxTargets {
				wantPatches, wantErr = 0, mpol.ErrTooManyTargets.Error()
			}
			if len(resp.Targets) != wantPatches {
				t.Errorf("Evaluate(%s, %d targets) = %d target patches, want %d", form, n, len(resp.Targets), wantPatches)
			}
			gotErr := ""
			for _, r := range resp.Results {
				if r.Status == eval.StatusError {
					gotErr = r.Message
				}
			}
			if wantErr == "" && gotErr != "" || wantErr != "" && !strings.Contains(gotErr, wantErr) {
				t.Errorf("Evaluate(%s, %d targets) error = %q, want %q", form, n, gotErr, wantErr)
			}
		}
	}
}
