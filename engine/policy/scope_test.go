package policy_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// TestScopes: the kinds are split as Kyverno's ParseKindSelector splits
// them (kinds.go of its API package), subresources left out (Pod/exec,
// Pod.exec, v1/Pod/status); a policy with background: false has only its
// mutateExisting rules replayed.
func TestScopes(t *testing.T) {
	const doc = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
  annotations: {pod-policies.kyverno.io/autogen-controllers: none}
spec:
  background: false
  generateExisting: true
  rules:
  - name: kinds
    match:
      any:
      - resources: {kinds: [apps/v1/Deployment, v1/ConfigMap, Pod/exec, Pod.exec, v1/Pod/status, Pod]}
    validate:
      message: m
      pattern: {metadata: {name: "?*"}}
  - name: targets
    match: {any: [{resources: {kinds: [Namespace]}}]}
    mutate:
      mutateExistingOnPolicyUpdate: true
      targets: [{apiVersion: v1, kind: Secret, namespace: "{{request.object.metadata.name}}"}]
      patchStrategicMerge: {metadata: {labels: {x: "y"}}}
`
	background := `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: bg
spec:
  generateExisting: true
  rules:
  - name: kinds
    match:
      any:
      - resources: {kinds: [apps/v1/Deployment, v1/ConfigMap, Pod/exec, Pod.exec, v1/Pod/status, Pod]}
    validate:
      message: m
      pattern: {metadata: {name: "?*"}}
  - name: netpol
    match: {all: [{resources: {kinds: [Namespace]}}]}
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: deny
      namespace: "{{request.object.metadata.name}}"
      data: {spec: {podSelector: {}}}
`
	kinds := []match.Kind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "*", Version: "v1", Kind: "ConfigMap"},
		{Group: "*", Version: "*", Kind: "Pod"},
	}
	tests := []struct {
		name string
		give string
		want policy.Scopes
	}{
		{
			name: "not a background policy: mutateExisting only",
			give: doc,
			want: policy.Scopes{MutateExisting: policy.Scope{Rules: []string{"targets"}, Kinds: []match.Kind{{Group: "*", Version: "*", Kind: "Namespace"}}}},
		},
		{
			name: "background policy",
			give: background,
			want: policy.Scopes{
				Background:       policy.Scope{Rules: []string{"kinds"}, Kinds: kinds},
				GenerateExisting: policy.Scope{Rules: []string{"netpol"}, Kinds: []match.Kind{{Group: "*", Version: "*", Kind: "Namespace"}}},
			},
		},
	}
	for _, tt := range tests {
		p, err := policy.Compile(decode(t, tt.give))
		if err != nil {
			t.Fatalf("Compile(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestScopesValidating: a ValidatingPolicy's resourceRules, subresources
// left out; nothing when its background evaluation is disabled.
func TestScopesValidating(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: vp}
spec:
  autogen: {podControllers: {controllers: []}}
  evaluation: {background: {enabled: %s}}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods, pods/status, configmaps]
  validations:
  - expression: "true"
`
	tests := []struct {
		enabled string
		want    policy.Scopes
	}{
		{"true", policy.Scopes{Background: policy.Scope{Kinds: []match.Kind{{Group: "", Version: "v1", Resource: "pods"}, {Group: "", Version: "v1", Resource: "configmaps"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := vpol.Decode("vp.yaml", []byte(fmt.Sprintf(doc, tt.enabled)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileValidating(docs[0])
		if err != nil {
			t.Fatalf("CompileValidating(background %s): %v", tt.enabled, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(background %s) mismatch (-want +got):\n%s", tt.enabled, diff)
		}
	}
}

// TestScopesMutating: a MutatingPolicy's resourceRules and those of its
// autogen variants; nothing when its background
// evaluation is disabled (Kyverno's background scans report only the
// others).
func TestScopesMutating(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: mp}
spec:
  autogen: {podControllers: {controllers: [deployments]}}
  evaluation: {background: {enabled: %s}}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "x"}}}'
`
	tests := []struct {
		enabled string
		want    policy.Scopes
	}{
		{"true", policy.Scopes{Background: policy.Scope{Kinds: []match.Kind{{Group: "", Version: "v1", Resource: "pods"}, {Group: "apps", Version: "v1", Resource: "deployments"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := mpol.Policies.Decode("mp.yaml", []byte(fmt.Sprintf(doc, tt.enabled)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileMutating(docs[0])
		if err != nil {
			t.Fatalf("CompileMutating(background %s): %v", tt.enabled, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(background %s) mismatch (-want +got):\n%s", tt.enabled, diff)
		}
	}
}

// TestScopesMutateExisting: a MutatingPolicy with mutateExisting replays
// the resources of its matchConstraints (its triggers), not those of its
// targetMatchConstraints, under a rule named after it.
func TestScopesMutateExisting(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: mp}
spec:
  evaluation:
    background: {enabled: false}
    mutateExisting: {enabled: %s}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments, deployments/scale]}
  targetMatchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "x"}}}'
`
	tests := []struct {
		enabled string
		want    policy.Scopes
	}{
		{"true", policy.Scopes{MutateExisting: policy.Scope{Rules: []string{"mp"}, Kinds: []match.Kind{{Group: "apps", Version: "v1", Resource: "deployments"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := mpol.Policies.Decode("mp.yaml", []byte(fmt.Sprintf(doc, tt.enabled)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileMutating(docs[0])
		if err != nil {
			t.Fatalf("CompileMutating(mutateExisting %s): %v", tt.enabled, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(mutateExisting %s) mismatch (-want +got):\n%s", tt.enabled, diff)
		}
	}
}

// TestScopesVAP: a ValidatingAdmissionPolicy's matchConstraints, only when
// it is labelled reports.kyverno.io/enabled: "true" (as Kyverno's reports
// controller selects them).
func TestScopesVAP(t *testing.T) {
	const doc = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: vap
  labels: {reports.kyverno.io/enabled: "%s"}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments, deployments/scale]}
  validations:
  - expression: object.spec.replicas <= 2
`
	tests := []struct {
		label string
		want  policy.Scopes
	}{
		{"true", policy.Scopes{Background: policy.Scope{Kinds: []match.Kind{{Group: "apps", Version: "v1", Resource: "deployments"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := vap.Decode("vap.yaml", []byte(fmt.Sprintf(doc, tt.label)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileVAP(docs[0])
		if err != nil {
			t.Fatalf("CompileVAP(label %s): %v", tt.label, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(label %s) mismatch (-want +got):\n%s", tt.label, diff)
		}
	}
}

// TestScopesImageValidating: an ImageValidatingPolicy's matchConstraints
// and those of its autogen variants (Kyverno's background scans evaluate
// it on both); nothing when its background evaluation is disabled.
func TestScopesImageValidating(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata: {name: iv}
spec:
  autogen: {podControllers: {controllers: [deployments]}}
  evaluation: {background: {enabled: %s}}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  matchImageReferences:
  - glob: "registry.example/*"
  attestors:
  - name: cosign
    cosign:
      key: {data: unused}
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.cosign]) > 0)"
`
	tests := []struct {
		enabled string
		want    policy.Scopes
	}{
		{"true", policy.Scopes{Background: policy.Scope{Kinds: []match.Kind{{Group: "", Version: "v1", Resource: "pods"}, {Group: "apps", Version: "v1", Resource: "deployments"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := ivpol.Policies.Decode("iv.yaml", []byte(fmt.Sprintf(doc, tt.enabled)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileImageValidating(docs[0])
		if err != nil {
			t.Fatalf("CompileImageValidating(background %s): %v", tt.enabled, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(background %s) mismatch (-want +got):\n%s", tt.enabled, diff)
		}
	}
}

// TestScopesGenerating: a GeneratingPolicy with generateExisting replays
// the resources of its resourceRules (no subresources) under one rule, the
// policy's name, as Kyverno's gpol engine names its results; without
// generateExisting it has no background work.
func TestScopesGenerating(t *testing.T) {
	const doc = `
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: gp}
spec:
  evaluation:
    generateExisting: {enabled: %s}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [namespaces, namespaces/status]
  generate:
  - expression: generator.Apply(object.metadata.name, [])
`
	tests := []struct {
		existing string
		want     policy.Scopes
	}{
		{"true", policy.Scopes{GenerateExisting: policy.Scope{Rules: []string{"gp"}, Kinds: []match.Kind{{Group: "", Version: "v1", Resource: "namespaces"}}}}},
		{"false", policy.Scopes{}},
	}
	for _, tt := range tests {
		docs, err := gpol.Policies.Decode("gp.yaml", []byte(fmt.Sprintf(doc, tt.existing)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.CompileGenerating(docs[0])
		if err != nil {
			t.Fatalf("CompileGenerating(generateExisting %s): %v", tt.existing, err)
		}
		if diff := cmp.Diff(tt.want, p.Scopes(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Scopes(generateExisting %s) mismatch (-want +got):\n%s", tt.existing, diff)
		}
	}
}
