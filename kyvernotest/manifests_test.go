package kyvernotest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunManifests runs testdata/manifests: validate.manifests rules
// verifying Services signed with two ECDSA keys made for the suite, as
// kubectl sigstore sign does (message and signature annotations). The
// results and messages are those of kyverno test v1.19.0 on these files:
// a signed Service passes; a changed field fails with the diff; a missing
// message or signature fails; a signature by another key is an error; a
// rule's ignoreFields hides the change; count 2 needs both signers, and a
// nested attestor set counts as one entry; an attestor's annotations that
// the resource lacks are an error.
func TestRunManifests(t *testing.T) {
	rep, err := Run(context.Background(), []string{"testdata/manifests"}, Options{})
	if err != nil {
		t.Fatalf("Run(testdata/manifests) error = %v", err)
	}
	var got []string
	for _, s := range rep.Suites {
		if s.Err != nil {
			t.Fatalf("Run(testdata/manifests) suite error = %v", s.Err)
		}
		for _, r := range s.Results {
			got = append(got, r.Policy+" "+r.Resource+" "+r.Rule+": "+r.Message)
		}
	}
	want := []string{
		"signed-services v1/Service/default/signed key-a: verified manifest signatures; manifest verification succeeded; verifiedCount 1; requiredCount 1; message singed by a valid signer: ",
		"signed-services v1/Service/default/tampered key-a: manifest verification failed; verifiedCount 0; requiredCount 1; message .attestors[0].entries[0].keys: failed to verify signature. diff found; {\"items\":[{\"key\":\"spec.ports.0.port\",\"values\":{\"after\":8080,\"before\":80}}]}",
		"signed-services v1/Service/default/unsigned key-a: manifest verification failed; verifiedCount 0; requiredCount 1; message .attestors[0].entries[0].keys: YAML manifest not found for this resource: message not found",
		"signed-services v1/Service/default/message-only key-a: manifest verification failed; verifiedCount 0; requiredCount 1; message .attestors[0].entries[0].keys: failed to verify signature: signature not found",
		"signed-services v1/Service/default/signed-by-b key-a: error occurred during manifest verification: .attestors[0].entries[0].keys: failed to verify signature: verification failed for 1 signature. all trials: [\"[publickey 1/1] [signature 1/1] error: cosign.VerifyBlobCmd.Exec() returned an error: invalid signature when validating ASN.1 encoded signature\"]",
		"ignore-port v1/Service/default/tampered ignore-port: verified manifest signatures; manifest verification succeeded; verifiedCount 1; requiredCount 1; message singed by a valid signer: ",
		"two-signers v1/Service/default/signed-by-both count-2: verified manifest signatures; manifest verification succeeded; verifiedCount 2; requiredCount 2; message singed by a valid signer: ,singed by a valid signer: ",
		"two-signers v1/Service/default/tampered-by-both count-2: manifest verification failed; verifiedCount 0; requiredCount 2; message .attestors[0].entries[0].keys: failed to verify signature. diff found; {\"items\":[{\"key\":\"spec.ports.0.port\",\"values\":{\"after\":8080,\"before\":80}}]},.attestors[0].entries[1].keys: failed to verify signature. diff found; {\"items\":[{\"key\":\"spec.ports.0.port\",\"values\":{\"after\":8080,\"before\":80}}]}",
		"two-signers v1/Service/default/signed count-2: error occurred during manifest verification: .attestors[0].entries[1].keys: failed to verify signature: verification failed for 1 signature. all trials: [\"[publickey 1/1] [signature 1/1] error: cosign.VerifyBlobCmd.Exec() returned an error: invalid signature when validating ASN.1 encoded signature\"]",
		"two-signers v1/Service/default/signed-by-both nested: verified manifest signatures; manifest verification succeeded; verifiedCount 2; requiredCount 2; message manifest verification succeeded; verifiedCount 1; requiredCount 1; message singed by a valid signer: ,singed by a valid signer: ",
		"two-signers v1/Service/default/signed nested: error occurred during manifest verification: annotations mismatch:  does not match expected value web for key team",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(testdata/manifests) mismatch (-want +got):\n%s", diff)
	}
}
