package eval_test

import (
	"context"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
)

// An unsigned Service: the rule below fails it, unless the request is a
// dry run.
const manifestsPolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: signed}
spec:
  validationFailureAction: Enforce
  background: false
  rules:
  - name: check
    match: {any: [{resources: {kinds: [Service]}}]}
    validate:
      manifests:
        dryRun: {enable: true}
        attestors:
        - entries:
          - keys:
              publicKeys: |-
                -----BEGIN PUBLIC KEY-----
                MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEyQfmL5YwHbn9xrrgG3vgbU0KJxMY
                BibYLJ5L4VSMvGxeMLnBGdM48w5IE//6idUPj3rscigFdHs7GDMH4LLAng==
                -----END PUBLIC KEY-----
`

// TestManifestsRequest: Kyverno's validateManifestHandler passes a dry-run
// admission request without verifying it; dryRun.enable (a dry run of the
// signed manifest, which needs a cluster) changes nothing here, as in
// Kyverno's CLI.
func TestManifestsRequest(t *testing.T) {
	pols := compileInline(t, manifestsPolicy)
	obj := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "default"}}
	tests := []struct {
		name       string
		dryRun     bool
		wantStatus eval.Status
		wantMsg    string
	}{
		{name: "dry run", dryRun: true, wantStatus: eval.StatusPass, wantMsg: "allowed because of DryRun request"},
		{name: "admission", wantStatus: eval.StatusFail, wantMsg: "manifest verification failed; verifiedCount 0; requiredCount 1; message .attestors[0].entries[0].keys: YAML manifest not found for this resource: message not found"},
	}
	for _, tt := range tests {
		resp := eval.New(eval.Options{}).Evaluate(context.Background(), pols, &eval.Request{Object: obj, DryRun: tt.dryRun})
		if len(resp.Results) != 1 {
			t.Fatalf("Evaluate(%s) = %d results, want 1", tt.name, len(resp.Results))
		}
		if got := resp.Results[0]; got.Status != tt.wantStatus || got.Message != tt.wantMsg {
			t.Errorf("Evaluate(%s) = %s %q, want %s %q", tt.name, got.Status, got.Message, tt.wantStatus, tt.wantMsg)
		}
	}
}
