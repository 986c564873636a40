package imageverify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ggcrmutate "github.com/google/go-containerregistry/pkg/v1/mutate"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"
	ggcrstatic "github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/notaryproject/notation-core-go/signature/jws"
	"github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/signer"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
)

// notarySigner is a notary signing key with its certificate chain (a leaf
// for code signing under a root CA), and the root's PEM.
type notarySigner struct {
	signer  notation.Signer
	rootPEM string
}

func newNotarySigner(t *testing.T) notarySigner {
	t.Helper()
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rootTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test notary root", Organization: []string{"verdict"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	root, err := x509.ParseCertificate(rootDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test notary signer", Organization: []string{"verdict"}},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		BasicConstraintsValid: true,
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, root, &leafKey.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.NewGenericSigner(leafKey, []*x509.Certificate{leaf, root})
	if err != nil {
		t.Fatal(err)
	}
	return notarySigner{signer: s, rootPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER}))}
}

// signNotary pushes a notary signature of d, as `notation sign` does.
func (r *testRegistry) signNotary(d name.Digest, s notarySigner) {
	r.t.Helper()
	repo, err := remote.NewRepository(d.Repository.Name())
	if err != nil {
		r.t.Fatal(err)
	}
	repo.PlainHTTP = true
	_, err = notation.Sign(context.Background(), s.signer, notationregistry.NewRepository(repo), notation.SignOptions{
		SignerSignOptions: notation.SignerSignOptions{SignatureMediaType: jws.MediaTypeEnvelope},
		ArtifactReference: d.String(),
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// TestImageValidatingPolicyNotary verifies notary signatures of an
// ImageValidatingPolicy's notary attestor: the signature's certificate
// chain must end at one of the attestor's certificates.
func TestImageValidatingPolicyNotary(t *testing.T) {
	reg := newTestRegistry(t)
	good, other := newNotarySigner(t), newNotarySigner(t)
	signed := reg.push("team/notary", "v1")
	reg.signNotary(signed, good)
	unsigned := reg.push("team/plain", "v1")

	verifier, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := eval.New(eval.Options{ImageVerifier: verifier})
	policyWith := func(certs string) string {
		return fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: notary
spec:
  validationConfigurations: {mutateDigest: false, verifyDigest: false}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  attestors:
  - name: notary
    notary:
      certs:
        value: |
%s
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.notary]) > 0)"
    message: failed to verify image with notary cert
`, indent(certs, 10))
	}
	tag := func(d name.Digest) string { return d.Repository.Name() + ":v1" }
	tests := []struct {
		name   string
		policy string
		image  string
		want   []result
	}{{
		name:   "signed, the root trusted",
		policy: policyWith(good.rootPEM),
		image:  tag(signed),
		want:   []result{{"notary", "ImageVerify", "pass", "success"}},
	}, {
		name:   "signed, another root",
		policy: policyWith(other.rootPEM),
		image:  tag(signed),
		want:   []result{{"notary", "ImageVerify", "fail", "failed to verify image with notary cert"}},
	}, {
		name:   "not signed",
		policy: policyWith(good.rootPEM),
		image:  tag(unsigned),
		want:   []result{{"notary", "ImageVerify", "fail", "failed to verify image with notary cert"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compileImageValidating(t, tt.policy)
			resp := e.Evaluate(context.Background(), []*policy.Policy{p}, &eval.Request{Object: pod(tt.image)})
			var got []result
			for _, r := range resp.Results {
				got = append(got, result{r.Rule, string(r.Type), string(r.Status), r.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.image, diff)
			}
		})
	}
}

// pushReferrer pushes an OCI artifact of artifactType whose one layer is
// data (JSON), with d as subject, and returns its digest reference.
func (r *testRegistry) pushReferrer(d name.Digest, artifactType string, data string) name.Digest {
	r.t.Helper()
	img, err := ggcrmutate.AppendLayers(empty.Image, ggcrstatic.NewLayer([]byte(data), "application/vnd.cyclonedx+json"))
	if err != nil {
		r.t.Fatal(err)
	}
	img = ggcrmutate.MediaType(img, types.OCIManifestSchema1)
	img = ggcrmutate.ConfigMediaType(img, types.MediaType(artifactType))
	subject, err := ggcrremote.Head(d)
	if err != nil {
		r.t.Fatal(err)
	}
	img = ggcrmutate.Subject(img, *subject).(v1.Image)
	dig, err := img.Digest()
	if err != nil {
		r.t.Fatal(err)
	}
	ref := d.Repository.Digest(dig.String())
	if err := ggcrremote.Write(ref, img); err != nil {
		r.t.Fatal(err)
	}
	return ref
}

// TestImageValidatingPolicyNotaryReferrers verifies a notary-signed OCI
// referrer as an attestation and reads its data, as Kyverno's own
// ImageValidatingPolicy suites do with an SBOM.
func TestImageValidatingPolicyNotaryReferrers(t *testing.T) {
	reg := newTestRegistry(t)
	good := newNotarySigner(t)
	withSBOM := reg.push("team/sbom", "v1")
	reg.signNotary(withSBOM, good)
	sbom := reg.pushReferrer(withSBOM, "sbom/cyclone-dx", `{"bomFormat": "CycloneDX", "specVersion": "1.4"}`)
	reg.signNotary(sbom, good)
	unsignedSBOM := reg.push("team/unsigned-sbom", "v1")
	reg.signNotary(unsignedSBOM, good)
	reg.pushReferrer(unsignedSBOM, "sbom/cyclone-dx", `{"bomFormat": "CycloneDX"}`)
	noSBOM := reg.push("team/no-sbom", "v1")
	reg.signNotary(noSBOM, good)

	verifier, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := eval.New(eval.Options{ImageVerifier: verifier})
	p := compileImageValidating(t, fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: sbom
spec:
  validationConfigurations: {mutateDigest: false, verifyDigest: false}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  attestors:
  - name: notary
    notary:
      certs:
        value: |
%s
  attestations:
  - name: sbom
    referrer:
      type: sbom/cyclone-dx
  validations:
  - expression: >-
      images.containers.map(image, verifyImageSignatures(image, [attestors.notary])).all(e, e > 0)
    message: failed to verify image with notary cert
  - expression: >-
      images.containers.map(image, verifyAttestationSignatures(image, attestations.sbom ,[attestors.notary])).all(e, e > 0)
    message: failed to verify attestation with notary cert
  - expression: >-
      images.containers.map(image, extractPayload(image, attestations.sbom).bomFormat == 'CycloneDX').all(e, e)
    message: sbom is not a cyclone dx sbom
`, indent(good.rootPEM, 10)))
	tag := func(d name.Digest) string { return d.Repository.Name() + ":v1" }
	tests := []struct {
		name  string
		image string
		want  []result
	}{{
		name:  "signed image, signed SBOM",
		image: tag(withSBOM),
		want:  []result{{"sbom", "ImageVerify", "pass", "success"}},
	}, {
		name:  "signed image, SBOM not signed",
		image: tag(unsignedSBOM),
		want:  []result{{"sbom", "ImageVerify", "fail", "failed to verify attestation with notary cert"}},
	}, {
		name:  "signed image without SBOM",
		image: tag(noSBOM),
		want:  []result{{"sbom", "ImageVerify", "fail", "failed to verify attestation with notary cert"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Evaluate(context.Background(), []*policy.Policy{p}, &eval.Request{Object: pod(tt.image)})
			var got []result
			for _, r := range resp.Results {
				got = append(got, result{r.Rule, string(r.Type), string(r.Status), r.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.image, diff)
			}
		})
	}
}
