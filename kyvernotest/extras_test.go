package kyvernotest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunExceptionsAndParams runs a test that uses exceptions and
// paramResources; the expected results are those of Kyverno's CLI.
func TestRunExceptionsAndParams(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"policy.yaml": `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: pol}
spec:
  background: false
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: label team is required
      pattern: {metadata: {labels: {team: "?*"}}}
  - name: forbidden-names
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        paramKind: {apiVersion: v1, kind: ConfigMap}
        paramRef: {selector: {matchLabels: {kind: limit}}, parameterNotFoundAction: Deny}
        expressions:
        - expression: "object.metadata.name != params.data.forbidden"
          messageExpression: "'forbidden by ' + params.metadata.name"
  - name: by-name
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        paramKind: {apiVersion: v1, kind: ConfigMap}
        paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
        expressions:
        - expression: "true"
`,
		"resources.yaml": `apiVersion: v1
kind: Pod
metadata: {name: exempt, namespace: ns1}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: blocked, namespace: ns1, labels: {team: a}}
spec: {containers: [{name: c, image: nginx}]}
`,
		"params.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default, labels: {kind: limit}}
data: {forbidden: blocked}
`,
		"exceptions.yaml": `apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: ex, namespace: kyverno}
spec:
  exceptions: [{policyName: pol, ruleNames: [team]}]
  match: {any: [{resources: {kinds: [Pod], names: [exempt]}}]}
`,
		"kyverno-test.yaml": `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: t}
policies: [policy.yaml]
resources: [resources.yaml]
exceptions: [exceptions.yaml]
paramResources: [params.yaml]
results:
- {policy: pol, rule: team, resources: [exempt], kind: Pod, result: skip}
- {policy: pol, rule: team, resources: [blocked], kind: Pod, result: pass}
- {policy: pol, rule: forbidden-names, resources: [exempt], kind: Pod, result: pass}
- {policy: pol, rule: forbidden-names, resources: [blocked], kind: Pod, result: fail}
- {policy: pol, rule: by-name, resources: [blocked], kind: Pod, result: error}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run() suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, summarize(r)+" | "+r.Message)
		}
	}
	want := []string{
		"v1/Pod/ns1/exempt team: skip -> skip ok Ok | rule is skipped due to policy exceptionskyverno/ex",
		"v1/Pod/ns1/blocked team: pass -> pass ok Ok | validation rule 'team' passed.",
		"v1/Pod/ns1/exempt forbidden-names: pass -> pass ok Ok | Validation rule 'forbidden-names' passed.",
		"v1/Pod/ns1/blocked forbidden-names: fail -> fail ok Ok | forbidden by limits",
		"v1/Pod/ns1/blocked by-name: error -> error ok Ok | error in parameterized resource: paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run() results mismatch (-want +got):\n%s", diff)
	}
}
