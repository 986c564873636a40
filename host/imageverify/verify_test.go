package imageverify

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	sigpayload "github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// testRegistry is go-containerregistry's in-process registry on loopback.
type testRegistry struct {
	t    *testing.T
	host string
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return &testRegistry{t: t, host: strings.TrimPrefix(srv.URL, "http://")}
}

// push pushes a random image as repo:tag and returns its digest reference.
func (r *testRegistry) push(repo, tag string) name.Digest {
	r.t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		r.t.Fatal(err)
	}
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		r.t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		r.t.Fatal(err)
	}
	return ref.Context().Digest(d.String())
}

type testKey struct {
	sv  signature.SignerVerifier
	pem string
}

func newKey(t *testing.T) testKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return testKey{sv: sv, pem: string(pub)}
}

// sign attaches a cosign signature of d made with k, as `cosign sign
// --key --tlog-upload=false` does.
func (r *testRegistry) sign(d name.Digest, k testKey) {
	r.t.Helper()
	pld, err := (&sigpayload.Cosign{Image: d}).MarshalJSON()
	if err != nil {
		r.t.Fatal(err)
	}
	raw, err := k.sv.SignMessage(bytes.NewReader(pld))
	if err != nil {
		r.t.Fatal(err)
	}
	sig, err := static.NewSignature(pld, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		r.t.Fatal(err)
	}
	se, err := ociremote.SignedEntity(d)
	if err != nil {
		r.t.Fatal(err)
	}
	se, err = mutate.AttachSignatureToEntity(se, sig)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := ociremote.WriteSignatures(d.Repository, se); err != nil {
		r.t.Fatal(err)
	}
}

// attest attaches an in-toto attestation of d with predicate, as `cosign
// attest --key --tlog-upload=false` does.
func (r *testRegistry) attest(d name.Digest, k testKey, predicateType string, predicate map[string]any) {
	r.t.Helper()
	hex := strings.TrimPrefix(d.DigestStr(), "sha256:")
	stmt, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v0.1",
		"predicateType": predicateType,
		"subject":       []any{map[string]any{"name": d.Repository.Name(), "digest": map[string]any{"sha256": hex}}},
		"predicate":     predicate,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	env, err := dsse.WrapSigner(k.sv, "application/vnd.in-toto+json").SignMessage(bytes.NewReader(stmt))
	if err != nil {
		r.t.Fatal(err)
	}
	att, err := static.NewAttestation(env)
	if err != nil {
		r.t.Fatal(err)
	}
	se, err := ociremote.SignedEntity(d)
	if err != nil {
		r.t.Fatal(err)
	}
	se, err = mutate.AttachAttestationToEntity(se, att)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := ociremote.WriteAttestations(d.Repository, se); err != nil {
		r.t.Fatal(err)
	}
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}

func compilePolicy(t *testing.T, yaml string) *policy.Policy {
	t.Helper()
	docs, err := kyverno.DecodePolicies("test", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pod(image string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "default"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}},
	}
}

type result struct {
	Rule, Type, Status, Message string
}

// TestVerifyImagesEndToEnd runs verifyImages rules through the engine with
// this package's Verifier against a loopback registry.
func TestVerifyImagesEndToEnd(t *testing.T) {
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

	policyWith := func(key string, extra string) string {
		return fmt.Sprintf(`apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: check-images
spec:
  validationFailureAction: Enforce
  rules:
  - name: verify
    match:
      any:
      - resources:
          kinds: [Pod]
    verifyImages:
    - imageReferences: ["%s/team/*"]
      skipImageReferences: ["*/team/skipped*"]
%s
      attestors:
      - count: 1
        entries:
        - keys:
            publicKeys: |-
%s
            rekor:
              ignoreTlog: true
            ctlog:
              ignoreSCT: true
`, reg.host, extra, indent(key, 14))
	}

	tag := func(d name.Digest) string { return d.Repository.Name() + ":v1" }
	tests := []struct {
		name      string
		policy    string
		image     string
		want      []result
		wantImage string // the image after mutation ("" when unchanged)
	}{{
		name:   "signed image with the right key passes and gets its digest",
		policy: policyWith(good.pem, ""),
		image:  tag(signed),
		want: []result{
			{"verify", "ImageVerify", "pass", "verified image signatures for " + tag(signed)},
			{"verify", "ImageVerify", "pass", "image verified"},
		},
		wantImage: tag(signed) + "@" + signed.DigestStr(),
	}, {
		name:   "wrong key fails",
		policy: policyWith(other.pem, ""),
		image:  tag(signed),
		want: []result{
			{"verify", "ImageVerify", "fail", "failed to verify image " + tag(signed) + ": .attestors[0].entries[0].keys: no matching signatures: "},
			{"verify", "ImageVerify", "fail", "unverified image " + signed.String()},
		},
		wantImage: tag(signed) + "@" + signed.DigestStr(),
	}, {
		name:   "missing signature fails",
		policy: policyWith(good.pem, ""),
		image:  tag(unsigned),
		want: []result{
			{"verify", "ImageVerify", "fail", "failed to verify image " + tag(unsigned) + ": .attestors[0].entries[0].keys: no signatures found"},
			{"verify", "ImageVerify", "fail", "unverified image " + unsigned.String()},
		},
		wantImage: tag(unsigned) + "@" + unsigned.DigestStr(),
	}, {
		name:   "digest reference without mutation",
		policy: policyWith(good.pem, "      mutateDigest: false"),
		image:  signed.String(),
		want: []result{
			{"verify", "ImageVerify", "pass", "verified image signatures for " + signed.String()},
			{"verify", "ImageVerify", "pass", "image verified"},
		},
	}, {
		name:   "verifyDigest fails a tag when mutateDigest is off",
		policy: policyWith(good.pem, "      mutateDigest: false"),
		image:  tag(signed),
		want: []result{
			{"verify", "ImageVerify", "pass", "verified image signatures for " + tag(signed)},
			{"verify", "ImageVerify", "fail", "missing digest for " + tag(signed)},
		},
	}, {
		name:   "image outside imageReferences is not checked",
		policy: policyWith(good.pem, ""),
		image:  "docker.io/library/nginx:1.25",
	}, {
		name: "attestation conditions hold",
		policy: policyWith(good.pem, fmt.Sprintf(`      attestations:
      - type: https://example.com/review/v1
        attestors:
        - entries:
          - keys:
              publicKeys: |-
%s
              rekor:
                ignoreTlog: true
        conditions:
        - all:
          - key: "{{ reviewed }}"
            operator: Equals
            value: true
          - key: "{{ author }}"
            operator: In
            value: [ann, bob]`, indent(good.pem, 16))),
		image: tag(attested),
		want: []result{
			{"verify", "ImageVerify", "pass", "verified image attestations for " + attested.String()},
			{"verify", "ImageVerify", "pass", "image verified"},
		},
		wantImage: tag(attested) + "@" + attested.DigestStr(),
	}, {
		name: "attestation conditions fail",
		policy: policyWith(good.pem, fmt.Sprintf(`      attestations:
      - type: https://example.com/review/v1
        attestors:
        - entries:
          - keys:
              publicKeys: |-
%s
              rekor:
                ignoreTlog: true
        conditions:
        - all:
          - key: "{{ author }}"
            operator: Equals
            value: bob
            message: author must be bob`, indent(good.pem, 16))),
		image: tag(attested),
		want: []result{
			{"verify", "ImageVerify", "fail", "image attestations verification failed, verifiedCount: 0, requiredCount: 1, error: .attestations[0].attestors[0].entries[0].keys: attestation checks failed for " + attested.String() + " and predicate https://example.com/review/v1: author must be bob"},
			{"verify", "ImageVerify", "fail", "unverified image " + attested.String()},
		},
		wantImage: tag(attested) + "@" + attested.DigestStr(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compilePolicy(t, tc.policy)
			resp := e.Evaluate(context.Background(), []*policy.Policy{p}, &eval.Request{Object: pod(tc.image)})
			var got []result
			for _, r := range resp.Results {
				msg := r.Message
				// cosign's error detail after the colon is not the contract.
				if i := strings.Index(msg, "no matching signatures: "); i >= 0 {
					msg = msg[:i+len("no matching signatures: ")]
				}
				got = append(got, result{r.Rule, string(r.Type), string(r.Status), msg})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			gotImage := ""
			if resp.Patched != nil {
				c := resp.Patched["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
				gotImage = c["image"].(string)
				if gotImage == tc.image {
					gotImage = ""
				}
			}
			if gotImage != tc.wantImage {
				t.Errorf("patched image = %q, want %q", gotImage, tc.wantImage)
			}
		})
	}
}

// TestVerifierCache: a second check of the same image and policy version
// is answered from the cache, a new policy version verifies again.
func TestVerifierCache(t *testing.T) {
	reg := newTestRegistry(t)
	k := newKey(t)
	d := reg.push("team/cached", "v1")
	reg.sign(d, k)
	v, err := New(Options{CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	check := eval.ImageCheck{Image: d.String(), PublicKey: k.pem, IgnoreTlog: true, IgnoreSCT: true, Policy: "v1"}
	for i, c := range []eval.ImageCheck{check, check, {Image: check.Image, PublicKey: k.pem, IgnoreTlog: true, IgnoreSCT: true, Policy: "v2"}} {
		if _, err := v.VerifyImage(context.Background(), c); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if got, want := v.cache.Len(), 2; got != want {
		t.Errorf("cache entries = %d, want %d", got, want)
	}
}
