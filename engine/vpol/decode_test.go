package vpol_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/vpol"
)

const minimalPolicy = `
apiVersion: policies.kyverno.io/%s
kind: %s
metadata:
  name: check
  namespace: team
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: "true"
    message: ok
`

func policyYAML(version, kind string) string {
	return fmt.Sprintf(minimalPolicy, version, kind)
}

func TestDecodeVersions(t *testing.T) {
	tests := []struct {
		name        string
		giveVersion string
		giveKind    string
	}{
		{name: "vpol v1", giveVersion: "v1", giveKind: "ValidatingPolicy"},
		{name: "vpol v1beta1", giveVersion: "v1beta1", giveKind: "ValidatingPolicy"},
		{name: "vpol v1alpha1", giveVersion: "v1alpha1", giveKind: "ValidatingPolicy"},
		{name: "nvpol v1", giveVersion: "v1", giveKind: "NamespacedValidatingPolicy"},
		{name: "nvpol v1beta1", giveVersion: "v1beta1", giveKind: "NamespacedValidatingPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := vpol.Decode(tt.name, []byte(policyYAML(tt.giveVersion, tt.giveKind)))
			if err != nil {
				t.Fatalf("Decode(%s) error: %v", tt.name, err)
			}
			if len(docs) != 1 {
				t.Fatalf("Decode(%s) = %d documents, want 1", tt.name, len(docs))
			}
			d := docs[0]
			got := []string{d.Kind, d.Metadata.Name, d.Metadata.Namespace, d.Spec.Validations[0].Expression, string(d.Spec.MatchConstraints.ResourceRules[0].Operations[0])}
			want := []string{tt.giveKind, "check", "team", "true", "CREATE"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decode(%s) fields (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{
			name:     "unknown spec field",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {validatons: []}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.validatons",
		},
		{
			name:     "unknown field in a validation",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {validations: [{expresion: 'true'}]}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.validations[0].expresion",
		},
		{
			name:     "wrong type",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {validationActions: Audit}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.validationActions",
		},
		{
			name:     "wrong type in a selector",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {matchConstraints: {namespaceSelector: {matchLabels: {a: 1}}}}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.matchConstraints.namespaceSelector.matchLabels.a",
		},
		{
			name:     "int32 out of range",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {webhookConfiguration: {timeoutSeconds: 9999999999}}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.webhookConfiguration.timeoutSeconds",
		},
		{
			name:     "unknown metadata field",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a, labelz: {}}\nspec: {}\n",
			wantCode: engine.CodeDecode, wantPath: "metadata.labelz",
		},
		{
			name:     "bad timestamp",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a, creationTimestamp: yesterday}\nspec: {}\n",
			wantCode: engine.CodeDecode, wantPath: "metadata",
		},
		{
			name:     "namespaced policy has no v1alpha1",
			give:     "apiVersion: policies.kyverno.io/v1alpha1\nkind: NamespacedValidatingPolicy\nmetadata: {name: a}\nspec: {}\n",
			wantCode: engine.CodeUnsupported, wantPath: "apiVersion",
		},
		{
			name:     "unknown version",
			give:     "apiVersion: policies.kyverno.io/v2\nkind: ValidatingPolicy\nmetadata: {name: a}\nspec: {}\n",
			wantCode: engine.CodeUnsupported, wantPath: "apiVersion",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vpol.Decode(tt.name, []byte(tt.give))
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
	give := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n" + policyYAML("v1", "ValidatingPolicy") +
		"---\napiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e}\nspec: {policyRefs: [{name: check, kind: ValidatingPolicy}]}\n"
	docs, err := vpol.Decode("mixed", []byte(give))
	if err != nil {
		t.Fatalf("Decode(mixed) error: %v", err)
	}
	if len(docs) != 1 || docs[0].Metadata.Name != "check" {
		t.Errorf("Decode(mixed) = %d documents, want the ValidatingPolicy only", len(docs))
	}
	exs, err := vpol.DecodeExceptions("mixed", []byte(give))
	if err != nil {
		t.Fatalf("DecodeExceptions(mixed) error: %v", err)
	}
	if len(exs) != 1 || exs[0].Spec.PolicyRefs[0].Name != "check" {
		t.Errorf("DecodeExceptions(mixed) = %d documents, want the PolicyException only", len(exs))
	}
}

func TestDecodeExceptionErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantCode engine.Code
		wantPath string
	}{
		{
			name:     "unknown field",
			give:     "apiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e}\nspec: {policyRefs: [{name: a, kind: ValidatingPolicy, rule: x}]}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.policyRefs[0].rule",
		},
		{
			name:     "wrong type",
			give:     "apiVersion: policies.kyverno.io/v1beta1\nkind: PolicyException\nmetadata: {name: e}\nspec: {allowedValues: x}\n",
			wantCode: engine.CodeDecode, wantPath: "spec.allowedValues",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vpol.DecodeExceptions(tt.name, []byte(tt.give))
			var de interface{ Unwrap() error }
			if !errors.As(err, &de) {
				t.Fatalf("DecodeExceptions(%q) error = %v, want a document error", tt.give, err)
			}
			es := engine.As(err)
			if len(es) == 0 || es[0].Code != tt.wantCode || es[0].Path != tt.wantPath {
				t.Errorf("DecodeExceptions(%q) error = %v, want %s at %q", tt.give, err, tt.wantCode, tt.wantPath)
			}
		})
	}
}
