package policy_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// TestLookupKinds: the kinds a policy's rules read through the Lookup, as
// engine/eval reads them: generate targets (data and clone: the clone
// source is of the target's kind), cloneList kinds (apiVersion dropped),
// mutate targets; a kind given by a variable means every kind.
func TestLookupKinds(t *testing.T) {
	const head = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
`
	const match = `
    match: {any: [{resources: {kinds: [Namespace]}}]}
`
	tests := []struct {
		name    string
		rules   string
		want    []string
		wantAll bool
	}{
		{"validate only", `
  - name: v` + match + `
    validate: {message: m, pattern: {metadata: {name: "?*"}}}
`, nil, false},
		{"mutate of the request's object", `
  - name: m` + match + `
    mutate: {patchStrategicMerge: {metadata: {labels: {a: b}}}}
`, nil, false},
		{"generate data, variable namespace", `
  - name: g` + match + `
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: default-deny
      namespace: "{{request.object.metadata.name}}"
      data: {spec: {podSelector: {}}}
`, []string{"NetworkPolicy"}, false},
		{"generate clone and two data rules", `
  - name: clone` + match + `
    generate:
      apiVersion: v1
      kind: Secret
      name: regcred
      namespace: "{{request.object.metadata.name}}"
      clone: {namespace: default, name: regcred}
  - name: quota` + match + `
    generate: {apiVersion: v1, kind: ResourceQuota, name: q, namespace: "{{request.object.metadata.name}}", data: {spec: {}}}
  - name: again` + match + `
    generate: {apiVersion: v1, kind: Secret, name: s, namespace: "{{request.object.metadata.name}}", data: {}}
`, []string{"Secret", "ResourceQuota"}, false},
		{"cloneList", `
  - name: cl` + match + `
    generate:
      namespace: "{{request.object.metadata.name}}"
      cloneList:
        namespace: default
        kinds: [v1/Secret, v1/ConfigMap]
        selector: {matchLabels: {allowedToBeCloned: "true"}}
`, []string{"", "Secret", "ConfigMap"}, false},
		{"generate foreach", `
  - name: fe` + match + `
    generate:
      foreach:
      - list: request.object.spec.namespaces
        apiVersion: v1
        kind: ConfigMap
        name: cm
        namespace: "{{element}}"
        data: {data: {a: b}}
`, []string{"ConfigMap"}, false},
		{"generate kind from a variable", `
  - name: g` + match + `
    generate:
      apiVersion: v1
      kind: "{{request.object.metadata.labels.kind}}"
      name: x
      namespace: default
      data: {}
`, nil, true},
		{"cloneList kind from a variable", `
  - name: cl` + match + `
    generate:
      namespace: "{{request.object.metadata.name}}"
      cloneList: {namespace: default, kinds: ["{{request.object.metadata.labels.kind}}"]}
`, nil, true},
		{"mutate targets", `
  - name: t` + match + `
    mutate:
      targets:
      - {apiVersion: v1, kind: ConfigMap, name: cm, namespace: "{{request.object.metadata.name}}"}
      - {apiVersion: v1, kind: Secret, namespace: default}
      patchStrategicMerge: {metadata: {labels: {a: b}}}
`, []string{"ConfigMap", "Secret"}, false},
		{"mutate target kind from a variable", `
  - name: t` + match + `
    mutate:
      targets:
      - {apiVersion: v1, kind: "{{request.object.kind}}", name: cm, namespace: default}
      patchStrategicMerge: {metadata: {labels: {a: b}}}
`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.Compile(decode(t, head+tt.rules))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, all := p.LookupKinds()
			if all != tt.wantAll {
				t.Errorf("LookupKinds() all = %v, want %v", all, tt.wantAll)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LookupKinds() kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLookupKindsGenerating: a GeneratingPolicy reads what it generated
// (kinds known only at evaluation) when it synchronizes.
func TestLookupKindsGenerating(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: gp}
spec:
  evaluation:
    synchronize: {enabled: %s}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [namespaces]
  generate:
  - expression: generator.Apply(object.metadata.name, [])
`
	for _, sync := range []bool{true, false} {
		docs, err := gpol.Policies.Decode("gp.yaml", []byte(fmt.Sprintf(doc, fmt.Sprint(sync))))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileGenerating(docs[0])
		if err != nil {
			t.Fatalf("CompileGenerating(synchronize %v): %v", sync, err)
		}
		if kinds, all := p.LookupKinds(); kinds != nil || all != sync {
			t.Errorf("LookupKinds(synchronize %v) = %q, %v, want nil, %v", sync, kinds, all, sync)
		}
	}
}
