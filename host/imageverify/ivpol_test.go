package imageverify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

func compileImageValidating(t *testing.T, yaml string) *policy.Policy {
	t.Helper()
	docs, err := ivpol.Policies.Decode("test", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.CompileImageValidating(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImageValidatingPolicyEndToEnd runs ImageValidatingPolicies through
// the engine with this package's Verifier against a loopback registry.
// The messages are those of Kyverno's ivpol engine.
func TestImageValidatingPolicyEndToEnd(t *testing.T) {
	reg := newTestRegistry(t)
	good, other := newKey(t), newKey(t)
	signed := reg.push("team/signed", "v1")
	reg.sign(signed, good)
	unsigned := reg.push("team/unsigned", "v1")
	attested := reg.push("team/attested", "v1")
	reg.sign(attested, good)
	reg.attest(attested, good, "https://example.com/review/v1", map[string]any{"reviewed": true, "author": "ann"})

	verifier, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := eval.New(eval.Options{ImageVerifier: verifier})

	policyWith := func(key, config, validation string) string {
		return fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: check-images
spec:
  validationActions: [Deny]
  validationConfigurations:
%s
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  matchImageReferences:
  - glob: "%s/team/*"
  attestors:
  - name: cosign
    cosign:
      key:
        data: |-
%s
      ctlog:
        insecureIgnoreTlog: true
        insecureIgnoreSCT: true
  - name: notary
    notary:
      certs:
        value: not-used
  attestations:
  - name: review
    intoto:
      type: https://example.com/review/v1
  validations:
  - expression: >-
      %s
    message: failed the image verification
`, config, reg.host, indent(key, 10), validation)
	}
	const sigs = "images.containers.map(image, verifyImageSignatures(image, [attestors.cosign])).all(e, e > 0)"
	const noDigest = "    verifyDigest: false\n    mutateDigest: false"
	tag := func(d name.Digest) string { return d.Repository.Name() + ":v1" }
	pinned := func(d name.Digest) string { return tag(d) + "@" + d.DigestStr() }
	const rule = "check-images"
	tests := []struct {
		name       string
		policy     string
		image      string
		want       []result
		wantPath   string
		wantImage  string // the image after mutateDigest ("" when unchanged)
		wantPrefix bool   // the message is a prefix of the one got
	}{{
		name:   "signed with the right key passes",
		policy: policyWith(good.pem, noDigest, sigs),
		image:  tag(signed),
		want:   []result{{rule, "ImageVerify", "pass", "success"}},
	}, {
		name:      "mutateDigest (default) pins the tag before the validations, which pass with verifyDigest",
		policy:    policyWith(good.pem, "", sigs),
		image:     tag(signed),
		want:      []result{{rule, "ImageVerify", "pass", "success"}},
		wantImage: pinned(signed),
	}, {
		name:   "a digest that does not resolve is a mutateDigest error, and verifyDigest fails the tag",
		policy: policyWith(good.pem, "", sigs),
		image:  reg.host + "/team/missing:v1",
		want: []result{
			{"mutateDigest", "ImageVerify", "error", "failed to update digest: failed to resolve digest for image " + reg.host + "/team/missing:v1: "},
			{rule, "ImageVerify", "fail", "image " + reg.host + "/team/missing:v1 does not have a digest"},
		},
		wantPrefix: true,
	}, {
		name:   "unsigned fails",
		policy: policyWith(good.pem, noDigest, sigs),
		image:  tag(unsigned),
		want:   []result{{rule, "ImageVerify", "fail", "failed the image verification"}},
	}, {
		name:   "wrong key fails",
		policy: policyWith(other.pem, noDigest, sigs),
		image:  tag(signed),
		want:   []result{{rule, "ImageVerify", "fail", "failed the image verification"}},
	}, {
		name:   "verifyDigest (default) fails a tag",
		policy: policyWith(good.pem, "    mutateDigest: false", sigs),
		image:  tag(signed),
		want:   []result{{rule, "ImageVerify", "fail", "image " + tag(signed) + " does not have a digest"}},
	}, {
		name:   "a digest reference passes verifyDigest",
		policy: policyWith(good.pem, "    mutateDigest: false", sigs),
		image:  signed.String(),
		want:   []result{{rule, "ImageVerify", "pass", "success"}},
	}, {
		name:   "an image outside matchImageReferences is not checked, and required does not apply to it",
		policy: policyWith(good.pem, noDigest, sigs),
		image:  "docker.io/library/nginx:1.25",
		want:   []result{{rule, "ImageVerify", "pass", "success"}},
	}, {
		name:      "required fails an image no attestor checked",
		policy:    policyWith(good.pem, "    verifyDigest: false", "true"),
		image:     tag(signed),
		want:      []result{{rule, "ImageVerify", "fail", "image " + pinned(signed) + " is not verified: no policy performed a signature or attestation check on it"}},
		wantImage: pinned(signed),
	}, {
		name:   "attestation verified and its payload read",
		policy: policyWith(good.pem, noDigest, "images.containers.all(image, verifyAttestationSignatures(image, attestations.review, [attestors.cosign]) > 0 && extractPayload(image, attestations.review).author == 'ann')"),
		image:  tag(attested),
		want:   []result{{rule, "ImageVerify", "pass", "success"}},
	}, {
		name:     "payload read before the attestation is verified is an error",
		policy:   policyWith(good.pem, noDigest, "images.containers.all(image, extractPayload(image, attestations.review).author == 'ann')"),
		image:    tag(attested),
		want:     []result{{"evaluation", "ImageVerify", "error", "failed to evaluate policy: failed to get payload: intoto attestation payload cannot be fetch before verifying intoto attestation"}},
		wantPath: "spec.validations[0].expression",
	}, {
		name:       "a notary attestor of an in-toto attestation is an error, not an unverified image",
		policy:     policyWith(good.pem, noDigest, "images.containers.all(image, verifyAttestationSignatures(image, attestations.review, [attestors.notary]) > 0)"),
		image:      tag(signed),
		want:       []result{{"evaluation", "ImageVerify", "error", "failed to evaluate policy: notary verifier only supports oci 1.1 referrers as attestations"}},
		wantPath:   "spec.validations[0].expression",
		wantPrefix: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compileImageValidating(t, tt.policy)
			resp := e.Evaluate(context.Background(), []*policy.Policy{p}, &eval.Request{Object: pod(tt.image)})
			var got []result
			for i, r := range resp.Results {
				msg := r.Message
				if tt.wantPrefix && i < len(tt.want) && strings.HasPrefix(msg, tt.want[i].Message) {
					msg = tt.want[i].Message
				}
				got = append(got, result{r.Rule, string(r.Type), string(r.Status), msg})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.image, diff)
			}
			if len(resp.Results) == 1 && resp.Results[0].Path != tt.wantPath {
				t.Errorf("Evaluate(%s) path = %q, want %q", tt.image, resp.Results[0].Path, tt.wantPath)
			}
			gotImage := ""
			if resp.Patched != nil {
				gotImage = resp.Patched["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"].(string)
			}
			if gotImage != tt.wantImage {
				t.Errorf("Evaluate(%s) patched image = %q, want %q", tt.image, gotImage, tt.wantImage)
			}
		})
	}

	t.Run("mutateDigest patches", func(t *testing.T) {
		p := compileImageValidating(t, policyWith(good.pem, "", sigs))
		in := vpol.NewInput(vpol.Request{Object: pod(tag(signed)), Operation: "CREATE"})
		got, err := p.ImageValidating.DigestPatches(context.Background(), in, nil, digestOnly{verifier})
		if err != nil {
			t.Fatal(err)
		}
		want := []map[string]any{{"op": "replace", "path": "/spec/containers/0/image", "value": tag(signed) + "@" + signed.DigestStr()}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DigestPatches() (-want +got):\n%s", diff)
		}
	})
}

// digestOnly is the Verifier as DigestPatches needs it.
type digestOnly struct{ v *Verifier }

func (d digestOnly) ImageDigest(ctx context.Context, image string) (string, error) {
	return d.v.ImageDigest(ctx, image)
}
func (d digestOnly) VerifyAttestor(context.Context, ivpol.AttestorCheck) ([]map[string]any, error) {
	return nil, fmt.Errorf("not used")
}
