package vap_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vap"
)

const minimalPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: check-replicas
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  variables:
  - {name: replicas, expression: object.spec.replicas}
  validations:
  - expression: variables.replicas <= 5
    messageExpression: "'too many: ' + string(variables.replicas)"
    reason: Invalid
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: check-replicas-binding
spec:
  policyName: check-replicas
  validationActions: [Deny, Audit]
  paramRef: {name: limits, namespace: team, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {env: prod}}
`

func TestDecode(t *testing.T) {
	docs, err := vap.Decode("minimal", []byte(minimalPolicy))
	if err != nil {
		t.Fatalf("Decode(minimal) error: %v", err)
	}
	if len(docs) != 1 {
		t.Fatalf("Decode(minimal) = %d documents, want 1", len(docs))
	}
	d := docs[0]
	got := []string{d.Kind, d.Metadata.Name, string(*d.Spec.FailurePolicy), d.Spec.ParamKind.Kind, d.Spec.Variables[0].Name,
		d.Spec.Validations[0].MessageExpression, string(*d.Spec.Validations[0].Reason), string(d.Spec.MatchConstraints.ResourceRules[0].Operations[1])}
	want := []string{"ValidatingAdmissionPolicy", "check-replicas", "Fail", "ConfigMap", "replicas", "'too many: ' + string(variables.replicas)", "Invalid", "UPDATE"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode(minimal) fields (-want +got):\n%s", diff)
	}

	bs, err := vap.DecodeBindings("minimal", []byte(minimalPolicy))
	if err != nil {
		t.Fatalf("DecodeBindings(minimal) error: %v", err)
	}
	if len(bs) != 1 {
		t.Fatalf("DecodeBindings(minimal) = %d documents, want 1", len(bs))
	}
	b := bs[0]
	got = []string{b.Kind, b.Metadata.Name, b.Spec.PolicyName, string(b.Spec.ValidationActions[1]), b.Spec.ParamRef.Name, b.Spec.ParamRef.Namespace,
		string(*b.Spec.ParamRef.ParameterNotFoundAction), b.Spec.MatchResources.NamespaceSelector.MatchLabels["env"]}
	want = []string{"ValidatingAdmissionPolicyBinding", "check-replicas-binding", "check-replicas", "Audit", "limits", "team", "Deny", "prod"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeBindings(minimal) fields (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	const head = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: a}\n"
	const bhead = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\n"
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{name: "unknown spec field", give: head + "spec: {validatons: []}\n", wantCode: engine.CodeDecode, wantPath: "spec.validatons"},
		{name: "unknown field in a validation", give: head + "spec: {validations: [{expresion: 'true'}]}\n", wantCode: engine.CodeDecode, wantPath: "spec.validations[0].expresion"},
		{name: "validations not a list", give: head + "spec: {validations: 'true'}\n", wantCode: engine.CodeDecode, wantPath: "spec.validations"},
		{name: "expression not a string", give: head + "spec: {validations: [{expression: true}]}\n", wantCode: engine.CodeDecode, wantPath: "spec.validations[0].expression"},
		{name: "unknown field in a resource rule", give: head + "spec: {matchConstraints: {resourceRules: [{kinds: [Pod]}]}}\n", wantCode: engine.CodeDecode, wantPath: "spec.matchConstraints.resourceRules[0].kinds"},
		{name: "selector label not a string", give: head + "spec: {matchConstraints: {objectSelector: {matchLabels: {a: 1}}}}\n", wantCode: engine.CodeDecode, wantPath: "spec.matchConstraints.objectSelector.matchLabels.a"},
		{name: "unknown metadata field", give: head[:len(head)-len("metadata: {name: a}\n")] + "metadata: {name: a, labelz: {}}\nspec: {}\n", wantCode: engine.CodeDecode, wantPath: "metadata.labelz"},
		{name: "v1beta1 is not loaded", give: "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: a}\nspec: {}\n", wantCode: engine.CodeUnsupported, wantPath: "apiVersion"},
		{name: "binding unknown field", give: bhead + "spec: {policyName: a, paramRef: {nam: x}}\n", wantCode: engine.CodeDecode, wantPath: "spec.paramRef.nam"},
		{name: "binding actions not a list", give: bhead + "spec: {policyName: a, validationActions: Deny}\n", wantCode: engine.CodeDecode, wantPath: "spec.validationActions"},
		{name: "binding v1alpha1 is not loaded", give: "apiVersion: admissionregistration.k8s.io/v1alpha1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {}\n", wantCode: engine.CodeUnsupported, wantPath: "apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, perr := vap.Decode(tt.name, []byte(tt.give))
			_, berr := vap.DecodeBindings(tt.name, []byte(tt.give))
			err := perr
			if err == nil {
				err = berr
			}
			es := engine.As(err)
			if len(es) == 0 {
				t.Fatalf("Decode(%q) error = %v, want an engine error", tt.give, err)
			}
			if es[0].Code != tt.wantCode || es[0].Path != tt.wantPath {
				t.Errorf("Decode(%q) error = %s at %q, want %s at %q (%v)", tt.give, es[0].Code, es[0].Path, tt.wantCode, tt.wantPath, err)
			}
		})
	}
}

func TestDecodeSkipsOtherKinds(t *testing.T) {
	give := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n" + minimalPolicy +
		"---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {name: m}\nspec: {}\n"
	docs, err := vap.Decode("mixed", []byte(give))
	if err != nil {
		t.Fatalf("Decode(mixed) error: %v", err)
	}
	if len(docs) != 1 || docs[0].Metadata.Name != "check-replicas" {
		t.Errorf("Decode(mixed) = %d documents, want the ValidatingAdmissionPolicy only", len(docs))
	}
	bs, err := vap.DecodeBindings("mixed", []byte(give))
	if err != nil {
		t.Fatalf("DecodeBindings(mixed) error: %v", err)
	}
	if len(bs) != 1 || bs[0].Spec.PolicyName != "check-replicas" {
		t.Errorf("DecodeBindings(mixed) = %d documents, want the binding only", len(bs))
	}
}
