package policy_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

func decode(t *testing.T, y string) *kyverno.Document {
	t.Helper()
	docs, err := kyverno.DecodePolicies("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("DecodePolicies() = %v", err)
	}
	if len(docs) != 1 {
		t.Fatalf("DecodePolicies() returned %d documents, want 1", len(docs))
	}
	return docs[0]
}

const basePolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: m
      pattern: {metadata: {name: "?*"}}
`

func TestCompileDefaults(t *testing.T) {
	p, err := policy.Compile(decode(t, basePolicy))
	if err != nil {
		t.Fatalf("Compile() = %v", err)
	}
	type summary struct {
		Name, Kind            string
		Background, Admission bool
		Action                policy.Action
		Scored                bool
		Rules                 []string
	}
	got := summary{Name: p.Name(), Kind: p.Kind(), Background: p.Background, Admission: p.Admission, Action: p.Action, Scored: p.Scored}
	for _, r := range p.Rules {
		got.Rules = append(got.Rules, r.Name)
	}
	want := summary{
		Name: "p", Kind: "ClusterPolicy", Background: true, Admission: true, Action: policy.Audit, Scored: true,
		Rules: []string{"r", "autogen-r", "autogen-cronjob-r"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compile(basePolicy) summary mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileHash(t *testing.T) {
	a, err := policy.Compile(decode(t, basePolicy))
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Compile(decode(t, basePolicy))
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() {
		t.Errorf("Compile(same policy).Hash() = %s and %s, want equal", a.Hash(), b.Hash())
	}
	d, err := policy.Compile(decode(t, `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: other
      pattern: {metadata: {name: "?*"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() == d.Hash() {
		t.Errorf("Compile(changed message).Hash() = %s, want a different hash", d.Hash())
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{
			name: "validate without a check",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {message: m}
`,
			wantCode: engine.CodeInvalidPolicy,
			wantPath: "spec.rules[0].validate",
		},
		{
			name: "unknown failure action",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Block
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate: {message: m, deny: {}}
`,
			wantCode: engine.CodeInvalidPolicy,
			wantPath: "spec.validationFailureAction",
		},
		{
			name: "unknown condition operator",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: m
      deny:
        conditions:
          any:
          - {key: a, operator: Same, value: b}
`,
			wantCode: engine.CodeInvalidPolicy,
			wantPath: "spec.rules[0].validate.deny.conditions.any[0].operator",
		},
		{
			name: "duplicate rule names",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate: {message: m, deny: {}}
  - name: r
    match: {any: [{resources: {kinds: [Secret]}}]}
    validate: {message: m, deny: {}}
`,
			wantCode: engine.CodeInvalidPolicy,
			wantPath: "spec.rules[1].name",
		},
		{
			name: "roles in a background policy",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}, clusterRoles: [admin]}]}
    validate: {message: m, deny: {}}
`,
			wantCode: engine.CodeBackgroundUserInfo,
			wantPath: "spec.rules[0]",
		},
		{
			name: "malformed foreach list",
			give: `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: m
      foreach:
      - list: "request.object.data.["
        deny: {}
`,
			wantCode: engine.CodeInvalidVariable,
			wantPath: "spec.rules[0].validate.foreach[0].list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Compile(decode(t, tt.give))
			errs := engine.As(err)
			for _, e := range errs {
				if e.Code == tt.wantCode && e.Path == tt.wantPath {
					return
				}
			}
			t.Errorf("Compile(%s) = %v, want an error with code %s at %s", tt.name, err, tt.wantCode, tt.wantPath)
		})
	}
}

// TestCompileWithDeferCEL checks that deferring the CEL expressions of
// validate.cel rules leaves Compile's problems unchanged (Kyverno reports
// an expression that does not compile when the rule is evaluated).
func TestCompileWithDeferCEL(t *testing.T) {
	const celPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        expressions:
        - expression: "object.spec.containers.all(c, c.image != 'x'"
`
	tests := []struct {
		name string
		give string
	}{
		{name: "valid rule, invalid expression", give: celPolicy},
		{name: "context entries in a cel rule", give: celPolicy + "    context: [{name: a, variable: {value: 1}}]\n"},
		{name: "empty expression", give: strings.Replace(celPolicy, `"object.spec.containers.all(c, c.image != 'x'"`, `""`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := decode(t, tt.give)
			want, wantErr := policy.Compile(doc)
			got, gotErr := policy.CompileWith(doc, policy.CompileOptions{DeferCEL: true})
			if diff := cmp.Diff(engine.As(wantErr), engine.As(gotErr)); diff != "" {
				t.Errorf("CompileWith(DeferCEL) errors differ from Compile's (-want +got):\n%s", diff)
			}
			if (want == nil) != (got == nil) {
				t.Fatalf("CompileWith(DeferCEL) = %v, want %v", got, want)
			}
			if want == nil {
				return
			}
			var wantRules, gotRules []string
			for _, r := range want.Rules {
				wantRules = append(wantRules, r.Name)
			}
			for _, r := range got.Rules {
				gotRules = append(gotRules, r.Name)
			}
			if diff := cmp.Diff(wantRules, gotRules); diff != "" {
				t.Errorf("CompileWith(DeferCEL) rules differ from Compile's (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompileElementOutsideForeach checks Kyverno's refusal of element
// variables outside a foreach, and that rules without them compile.
func TestCompileElementOutsideForeach(t *testing.T) {
	const head = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
`
	tests := []struct {
		name     string
		give     string
		wantPath string
	}{
		{name: "no element", give: `      message: "{{ request.object.metadata.name }}"
      pattern: {metadata: {name: "?*"}}
`},
		{name: "element in a foreach", give: `      foreach:
      - list: request.object.spec.containers
        pattern: {name: "{{ element.name }}"}
`},
		{name: "element outside a foreach", give: `      message: "{{ element.name }}"
      pattern: {metadata: {name: "?*"}}
`, wantPath: "spec.rules[0].validate.message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Compile(decode(t, head+tt.give))
			var gotPath string
			for _, e := range engine.As(err) {
				if e.Code == engine.CodeInvalidVariable {
					gotPath = e.Path
				}
			}
			if gotPath != tt.wantPath {
				t.Errorf("Compile() invalid variable at %q, want %q (error %v)", gotPath, tt.wantPath, err)
			}
		})
	}
}
