package imageverify

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature"
	sigpayload "github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/policy"
)

// testCA is a certificate authority that issues signing certificates as
// Fulcio does (code signing, the subject as a URI, the OIDC issuer in
// the 1.3.6.1.4.1.57264.1.1 extension).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test fulcio"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// signKeyless attaches to d a signature made with a fresh key whose
// certificate, issued by ca, names subject and issuer.
func (r *testRegistry) signKeyless(d name.Digest, ca *testCA, subject, issuer string) {
	r.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		r.t.Fatal(err)
	}
	u, err := url.Parse(subject)
	if err != nil {
		r.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		NotBefore:    time.Now().Add(-time.Minute), NotAfter: time.Now().Add(10 * time.Minute),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		URIs:        []*url.URL{u},
		ExtraExtensions: []pkix.Extension{{
			Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(issuer),
		}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		r.t.Fatal(err)
	}
	leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	sv, err := signature.LoadECDSASignerVerifier(key, crypto.SHA256)
	if err != nil {
		r.t.Fatal(err)
	}
	pld, err := (&sigpayload.Cosign{Image: d}).MarshalJSON()
	if err != nil {
		r.t.Fatal(err)
	}
	raw, err := sv.SignMessage(bytes.NewReader(pld))
	if err != nil {
		r.t.Fatal(err)
	}
	sig, err := static.NewSignature(pld, base64.StdEncoding.EncodeToString(raw), static.WithCertChain(leaf, []byte(ca.pem)))
	if err != nil {
		r.t.Fatal(err)
	}
	se, err := ociremote.SignedEntity(d)
	if err != nil {
		r.t.Fatal(err)
	}
	if se, err = mutate.AttachSignatureToEntity(se, sig); err != nil {
		r.t.Fatal(err)
	}
	if err := ociremote.WriteSignatures(d.Repository, se); err != nil {
		r.t.Fatal(err)
	}
}

// TestImageValidatingPolicyKeyless verifies keyless cosign signatures of
// an ImageValidatingPolicy: the certificate must chain to the attestor's
// roots and name one of its identities.
func TestImageValidatingPolicyKeyless(t *testing.T) {
	reg := newTestRegistry(t)
	ca, other := newTestCA(t), newTestCA(t)
	const subject, issuer = "https://github.com/team/app/.github/workflows/release.yaml@refs/heads/main", "https://token.actions.githubusercontent.com"
	signed := reg.push("team/keyless", "v1")
	reg.signKeyless(signed, ca, subject, issuer)

	verifier, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := eval.New(eval.Options{ImageVerifier: verifier})
	policyWith := func(roots, identity string) string {
		return fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: keyless
spec:
  validationConfigurations: {mutateDigest: false, verifyDigest: false}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  attestors:
  - name: ci
    cosign:
      keyless:
        identities:
        - %s
        roots: |
%s
      ctlog:
        insecureIgnoreTlog: true
        insecureIgnoreSCT: true
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.ci]) > 0)"
    message: not signed by the release workflow
`, identity, indent(roots, 10))
	}
	exact := fmt.Sprintf("{issuer: %q, subject: %q}", issuer, subject)
	tests := []struct {
		name   string
		policy string
		want   []result
	}{{
		name:   "the identity and roots match",
		policy: policyWith(ca.pem, exact),
		want:   []result{{"keyless", "ImageVerify", "pass", "success"}},
	}, {
		name:   "subject by regular expression",
		policy: policyWith(ca.pem, fmt.Sprintf("{issuer: %q, subjectRegExp: %q}", issuer, `^https://github\.com/team/.*`)),
		want:   []result{{"keyless", "ImageVerify", "pass", "success"}},
	}, {
		name:   "another subject fails",
		policy: policyWith(ca.pem, fmt.Sprintf("{issuer: %q, subject: %q}", issuer, "https://github.com/other/app")),
		want:   []result{{"keyless", "ImageVerify", "fail", "not signed by the release workflow"}},
	}, {
		name:   "another issuer fails",
		policy: policyWith(ca.pem, fmt.Sprintf("{issuer: %q, subject: %q}", "https://accounts.google.com", subject)),
		want:   []result{{"keyless", "ImageVerify", "fail", "not signed by the release workflow"}},
	}, {
		name:   "a certificate of other roots fails",
		policy: policyWith(other.pem, exact),
		want:   []result{{"keyless", "ImageVerify", "fail", "not signed by the release workflow"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := compileImageValidating(t, tt.policy)
			resp := e.Evaluate(context.Background(), []*policy.Policy{docs}, &eval.Request{Object: pod(signed.Repository.Name() + ":v1")})
			var got []result
			for _, r := range resp.Results {
				got = append(got, result{r.Rule, string(r.Type), string(r.Status), r.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s) results (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
