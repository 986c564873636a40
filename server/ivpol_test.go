package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// imageValidatingPolicy returns an ImageValidatingPolicy named name on the
// images of registry.example, with the given validationActions and
// validationConfigurations.
func imageValidatingPolicy(name, actions, config string) string {
	return `apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: ` + name + `
spec:
  validationActions: ` + actions + `
  validationConfigurations: ` + config + `
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  matchImageReferences:
  - glob: "registry.example/*"
  attestors:
  - name: cosign
    cosign:
      key:
        data: unused
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.cosign]) > 0)"
    message: images must be signed
`
}

// TestImageValidatingPoliciesFromTheFolder serves ImageValidatingPolicies
// from a --policies folder and decides as Kyverno's ivpol webhook does:
// "Policy NAME failed: MESSAGE" denies with Deny and warns with Warn; the
// images outside matchImageReferences pass; without an image verifier,
// mutateDigest is an error that denies (an unpinned image is not admitted
// quietly).
func TestImageValidatingPoliciesFromTheFolder(t *testing.T) {
	const noMutate = "{mutateDigest: false}"
	tests := []struct {
		name         string
		policy       string
		image        string
		wantAllowed  bool
		wantMessage  string
		wantWarnings []string
		wantResults  []verdictv1.Result
	}{{
		name:        "deny: a tag fails verifyDigest",
		policy:      imageValidatingPolicy("signed", "[Deny]", noMutate),
		image:       "registry.example/app:v1",
		wantMessage: "Policy signed failed: image registry.example/app:v1 does not have a digest",
		wantResults: []verdictv1.Result{verdictv1.Result_RESULT_FAIL},
	}, {
		name:        "deny: an image outside matchImageReferences passes",
		policy:      imageValidatingPolicy("signed", "[Deny]", noMutate),
		image:       "nginx",
		wantAllowed: true,
		wantResults: []verdictv1.Result{verdictv1.Result_RESULT_PASS},
	}, {
		name:         "warn",
		policy:       imageValidatingPolicy("signed", "[Warn]", noMutate),
		image:        "registry.example/app:v1",
		wantAllowed:  true,
		wantWarnings: []string{"Policy signed failed: image registry.example/app:v1 does not have a digest"},
		wantResults:  []verdictv1.Result{verdictv1.Result_RESULT_FAIL},
	}, {
		name:        "deny: mutateDigest without a verifier is an error",
		policy:      imageValidatingPolicy("signed", "[Deny]", "{}"),
		image:       "registry.example/app:v1",
		wantMessage: "Policy signed error: failed to update digest: failed to resolve digest for image registry.example/app:v1: image verification is not configured; Policy signed failed: image registry.example/app:v1 does not have a digest",
		wantResults: []verdictv1.Result{verdictv1.Result_RESULT_ERROR, verdictv1.Result_RESULT_FAIL},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, src := policyFolder(t, map[string]string{"policy.yaml": tt.policy})
			ts := startServer(t, Options{Sources: []PolicySource{src}})
			got, err := ts.client(t).Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: pod(t, "p", "default", tt.image, nil)})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			var results []verdictv1.Result
			for _, r := range got.GetResults() {
				results = append(results, r.GetResult())
			}
			if got.GetAllowed() != tt.wantAllowed || got.GetMessage() != tt.wantMessage {
				t.Errorf("Evaluate(%s) = allowed %v, message %q; want %v, %q", tt.name, got.GetAllowed(), got.GetMessage(), tt.wantAllowed, tt.wantMessage)
			}
			if diff := cmp.Diff(tt.wantWarnings, got.GetWarnings(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Evaluate(%s) warnings (-want +got):\n%s", tt.name, diff)
			}
			if !cmp.Equal(tt.wantResults, results) {
				t.Errorf("Evaluate(%s) = results %v, want %v", tt.name, results, tt.wantResults)
			}
		})
	}
}

// TestValidateImageValidatingPolicies: ValidatePolicies (and so
// /policyvalidate) accepts a valid ImageValidatingPolicy and refuses one
// whose cosign attestor names no way to verify, with the field's path.
func TestValidateImageValidatingPolicies(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	valid := imageValidatingPolicy("signed", "[Deny]", "{}")
	invalid := strings.Replace(valid, "      key:\n        data: unused\n", "      ctlog: {insecureIgnoreTlog: true}\n", 1)
	resp, err := c.ValidatePolicies(t.Context(), &verdictv1.ValidatePoliciesRequest{Documents: [][]byte{[]byte(valid), []byte(invalid)}})
	if err != nil {
		t.Fatalf("ValidatePolicies = %v", err)
	}
	docs := resp.GetDocuments()
	if len(docs) != 2 {
		t.Fatalf("ValidatePolicies = %d documents, want 2", len(docs))
	}
	if errs := docs[0].GetErrors(); len(errs) != 0 {
		t.Errorf("ValidatePolicies(valid) errors = %v, want none", errs)
	}
	errs := docs[1].GetErrors()
	if len(errs) != 1 || errs[0].GetCode() != "invalid_policy" || errs[0].GetPath() != "spec.attestors[0].cosign" {
		t.Errorf("ValidatePolicies(invalid) errors = %v, want one invalid_policy at spec.attestors[0].cosign", errs)
	}
}
