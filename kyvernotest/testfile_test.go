package kyvernotest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTests(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []*Test
	}{
		{
			name: "current schema",
			give: `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: t1
policies: [p.yaml, p.yaml]
resources: [r.yaml]
variables: values.yaml
userinfo: user.yaml
results:
- policy: p
  rule: r
  kind: Pod
  resources: [a, ns/b]
  result: pass
  operation: UPDATE
`,
			want: []*Test{{
				APIVersion: "cli.kyverno.io/v1alpha1", Kind: "Test",
				Metadata: map[string]any{"name": "t1"},
				Policies: []string{"p.yaml"}, Resources: []string{"r.yaml"},
				Variables: "values.yaml", UserInfo: "user.yaml",
				Results: []ExpectedResult{{Policy: "p", Rule: "r", Kind: "Pod", Resources: []string{"a", "ns/b"}, Result: "pass", Operation: "UPDATE"}},
			}},
		},
		{
			name: "older schema: resource, status and namespace fold into resources and result",
			give: `name: old
policies: [p.yaml]
resources: [r.yaml]
results:
- policy: p
  rule: r
  resource: a
  namespace: ns
  kind: Pod
  status: fail
`,
			want: []*Test{{
				Name: "old", Policies: []string{"p.yaml"}, Resources: []string{"r.yaml"},
				Results: []ExpectedResult{{Policy: "p", Rule: "r", Kind: "Pod", Resources: []string{"ns/a"}, Result: "fail"}},
			}},
		},
		{
			name: "older schema: patchedResource is patchedResources",
			give: `name: old
policies: [p.yaml]
resources: [r.yaml]
results:
- {policy: p, rule: r, resources: [a], kind: Pod, result: pass, patchedResource: patched.yaml}
`,
			want: []*Test{{
				Name: "old", Policies: []string{"p.yaml"}, Resources: []string{"r.yaml"},
				Results: []ExpectedResult{{Policy: "p", Rule: "r", Kind: "Pod", Resources: []string{"a"}, Result: "pass", PatchedResources: "patched.yaml"}},
			}},
		},
		{
			name: "field names match case-insensitively, as with Kyverno's decoder",
			give: `apiVersion: cli.kyverno.io/v1alpha1
kind: Test
results:
- policy: p
  isMUtatingPolicy: true
  result: skip
  kind: Pod
`,
			want: []*Test{{
				APIVersion: "cli.kyverno.io/v1alpha1", Kind: "Test",
				Results: []ExpectedResult{{Policy: "p", IsMutatingPolicy: true, Result: "skip", Kind: "Pod"}},
			}},
		},
		{
			name: "several documents, empty ones dropped, jsonPayload folded",
			give: `# leading comment
---
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
jsonPayload: ./payload.json
---
---
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: second
`,
			want: []*Test{
				{APIVersion: "cli.kyverno.io/v1alpha1", Kind: "Test", JSONPayloads: []string{"payload.json"}},
				{APIVersion: "cli.kyverno.io/v1alpha1", Kind: "Test", Metadata: map[string]any{"name": "second"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTests("kyverno-test.yaml", []byte(tt.give))
			if err != nil {
				t.Fatalf("ParseTests(%s) error = %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseTests(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestParseTestsErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{
			name:    "unknown field in a result is named",
			give:    "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nresults:\n- policy: p\n  expectedResult: pass\n",
			wantErr: `unknown field "expectedResult"`,
		},
		{
			name:    "unknown top-level field is named",
			give:    "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\npolicy: p.yaml\n",
			wantErr: `unknown field "policy"`,
		},
		{
			name:    "bad operation",
			give:    "kind: Test\nresults:\n- policy: p\n  operation: PATCH\n  result: pass\n  kind: Pod\n",
			wantErr: `operation "PATCH"`,
		},
		{
			name:    "other kind",
			give:    "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\n",
			wantErr: `kind "Values" is not Test`,
		},
		{
			name:    "YAML syntax",
			give:    "policies: [a\nresults: x\n",
			wantErr: "kyverno-test.yaml",
		},
		{
			name:    "no document",
			give:    "# nothing\n",
			wantErr: "no test document",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTests("kyverno-test.yaml", []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTests(%q) error = %v, want it to contain %q", tt.give, err, tt.wantErr)
			}
		})
	}
}
