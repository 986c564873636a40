package kyverno

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

func TestDecodeExceptions(t *testing.T) {
	input := `apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: a, namespace: ns}
spec:
  exceptions:
  - {policyName: p, ruleNames: [r, "autogen-*"]}
  match:
    any:
    - resources: {kinds: [Pod], names: ["x-*"]}
  conditions:
    all:
    - {key: "{{ request.operation }}", operator: Equals, value: CREATE}
  podSecurity:
  - {controlName: Host Namespaces, restrictedField: spec.hostNetwork, values: ["true"]}
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: cel-exception}
spec: {policyRefs: [{name: vpol, kind: ValidatingPolicy}]}
---
apiVersion: v1
kind: List
items:
- apiVersion: kyverno.io/v2beta1
  kind: PolicyException
  metadata: {name: b}
  spec:
    background: false
    exceptions: [{policyName: q, ruleNames: ["*"]}]
    match: {all: [{resources: {namespaces: [dev]}}]}
`
	got, err := DecodeExceptions("in.yaml", []byte(input))
	if err != nil {
		t.Fatalf("DecodeExceptions() error = %v", err)
	}
	no := false
	want := []*PolicyException{
		{
			APIVersion: "kyverno.io/v2", Kind: "PolicyException",
			Metadata: ObjectMeta{Name: "a", Namespace: "ns"},
			Spec: PolicyExceptionSpec{
				Exceptions:  []ExceptionRef{{PolicyName: "p", RuleNames: []string{"r", "autogen-*"}}},
				Match:       ExceptionMatch{Any: []ResourceFilter{{Resources: &ResourceDescription{Kinds: []string{"Pod"}, Names: []string{"x-*"}}}}},
				Conditions:  &AnyAllConditions{All: []Condition{{Key: "{{ request.operation }}", Operator: "Equals", Value: "CREATE"}}},
				PodSecurity: []PodSecurityStandard{{ControlName: "Host Namespaces", RestrictedField: "spec.hostNetwork", Values: []string{"true"}}},
			},
		},
		{
			APIVersion: "kyverno.io/v2beta1", Kind: "PolicyException",
			Metadata: ObjectMeta{Name: "b"},
			Spec: PolicyExceptionSpec{
				Background: &no,
				Exceptions: []ExceptionRef{{PolicyName: "q", RuleNames: []string{"*"}}},
				Match:      ExceptionMatch{All: []ResourceFilter{{Resources: &ResourceDescription{Namespaces: []string{"dev"}}}}},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeExceptions() mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeExceptionsErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{
			name:     "unknown field",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{policyName: p, ruleNames: [r]}]\n  match: {any: [{resources: {kinds: [Pod], nmes: [x]}}]}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.match.any[0].resources.nmes",
		},
		{
			name:     "wrong type",
			give:     "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: a}\nspec:\n  exceptions: [{policyName: p, ruleNames: r}]\n",
			wantCode: engine.CodeDecode, wantPath: "spec.exceptions[0].ruleNames",
		},
		{
			name:     "another kind",
			give:     "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: a}\nspec: {}\n",
			wantCode: engine.CodeUnsupported, wantPath: "kind",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeExceptions("in.yaml", []byte(tt.give))
			es := engine.As(err)
			if len(es) == 0 {
				t.Fatalf("DecodeExceptions() error = %v, want engine errors", err)
			}
			if es[0].Code != tt.wantCode || es[0].Path != tt.wantPath {
				t.Errorf("DecodeExceptions() error = %s at %q, want %s at %q", es[0].Code, es[0].Path, tt.wantCode, tt.wantPath)
			}
		})
	}
}
