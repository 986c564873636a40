package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// keyVerifier accepts the images of one registry host and resolves every
// image to a fixed digest. It stands for the cosign verifier
// (host/imageverify, tested against a loopback registry there): this
// test checks that the server hands verifyImages rules to
// Options.ImageVerifier and returns the digest patch.
type keyVerifier struct{ trusted string }

const testDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

func (v keyVerifier) VerifyImage(_ context.Context, c eval.ImageCheck) (*eval.ImageVerified, error) {
	if !strings.HasPrefix(c.Image, v.trusted+"/") {
		return nil, errors.New("no matching signatures")
	}
	return &eval.ImageVerified{Digest: testDigest}, nil
}

func (v keyVerifier) ImageDigest(context.Context, string) (string, error) { return testDigest, nil }

const verifyImagesPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: check-images
spec:
  validationFailureAction: Enforce
  webhookTimeoutSeconds: 10
  rules:
  - name: verify
    match:
      any:
      - resources:
          kinds: [Pod]
    verifyImages:
    - imageReferences: ["*"]
      attestors:
      - entries:
        - keys:
            publicKeys: |-
              -----BEGIN PUBLIC KEY-----
              MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8nXRh950IZbRj8Ra/N9sbqOPZrfM
              5/KAQN0/KjHcorm/J5yctVd7iEcnessRQjU917hmKO6JWVGHpDguIyakZA==
              -----END PUBLIC KEY-----
`

func TestEvaluateVerifiesImages(t *testing.T) {
	_, src := policyFolder(t, map[string]string{"images.yaml": verifyImagesPolicy})
	tests := []struct {
		name        string
		verifier    eval.ImageVerifier
		image       string
		wantAllowed bool
		wantResult  verdictv1.Result
		wantDigest  bool // the JSON Patch pins the image's digest
	}{
		{"trusted image passes and gets its digest", keyVerifier{trusted: "ghcr.io"}, "ghcr.io/acme/app:1", true, verdictv1.Result_RESULT_PASS, true},
		{"untrusted image is denied", keyVerifier{trusted: "ghcr.io"}, "docker.io/acme/app:1", false, verdictv1.Result_RESULT_FAIL, true},
		{"no verifier is an error", nil, "ghcr.io/acme/app:1", false, verdictv1.Result_RESULT_ERROR, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, Options{Sources: []PolicySource{src}, ImageVerifier: tt.verifier})
			c := ts.client(t)
			waitServing(t, dial(t, ts.addr))
			resp, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{
				Object:    pod(t, "p", "default", tt.image, nil),
				Operation: verdictv1.Operation_OPERATION_CREATE,
			})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if resp.GetAllowed() != tt.wantAllowed {
				t.Errorf("Evaluate(%s).Allowed = %v, want %v (message %q)", tt.image, resp.GetAllowed(), tt.wantAllowed, resp.GetMessage())
			}
			var got []verdictv1.Result
			for _, r := range resp.GetResults() {
				if r.GetType() == verdictv1.RuleType_RULE_TYPE_IMAGE_VERIFY {
					got = append(got, r.GetResult())
				}
			}
			if len(got) == 0 || got[0] != tt.wantResult {
				t.Errorf("Evaluate(%s) verifyImages results = %v, want first %v", tt.image, got, tt.wantResult)
			}
			if got := strings.Contains(string(resp.GetJsonPatch()), testDigest); got != tt.wantDigest {
				t.Errorf("Evaluate(%s) JSON patch = %s, want the digest: %v", tt.image, resp.GetJsonPatch(), tt.wantDigest)
			}
		})
	}
}
