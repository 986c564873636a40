//go:build e2e

package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigpayload "github.com/sigstore/sigstore/pkg/signature/payload"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// signedRegistry is go-containerregistry's registry on loopback with an
// image signed by a fresh key (as `cosign sign --key --tlog-upload=false`)
// and one not signed.
type signedRegistry struct {
	host             string
	signed, unsigned name.Digest
	pubKey           string
}

func startSignedRegistry(t *testing.T) *signedRegistry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	r := &signedRegistry{host: strings.TrimPrefix(srv.URL, "http://")}
	push := func(repo string) name.Digest {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(r.host + "/" + repo + ":v1")
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(tag, img); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return tag.Context().Digest(d.String())
	}
	r.signed, r.unsigned = push("team/signed"), push("team/unsigned")

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
	r.pubKey = string(pub)
	pld, err := (&sigpayload.Cosign{Image: r.signed}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sv.SignMessage(bytes.NewReader(pld))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := static.NewSignature(pld, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	se, err := ociremote.SignedEntity(r.signed)
	if err != nil {
		t.Fatal(err)
	}
	if se, err = mutate.AttachSignatureToEntity(se, sig); err != nil {
		t.Fatal(err)
	}
	if err := ociremote.WriteSignatures(r.signed.Repository, se); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestE2EImageValidatingPolicy creates an ImageValidatingPolicy in a real
// API server whose webhooks point at the proxy: an image of a loopback
// registry without a signature is blocked with the policy's message, a
// signed one is admitted with its digest added (mutateDigest, through the
// mutating webhook, before the validating one verifies the signature of
// the pinned image).
func TestE2EImageValidatingPolicy(t *testing.T) {
	reg := startSignedRegistry(t)
	policy := fmt.Sprintf(`apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: signed-images
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  matchImageReferences:
  - glob: "%s/*"
  attestors:
  - name: cosign
    cosign:
      key:
        data: |
%s
      ctlog:
        insecureIgnoreTlog: true
        insecureIgnoreSCT: true
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.cosign]) > 0)"
    message: the image must be signed by the team's key
`, reg.host, "          "+strings.ReplaceAll(strings.TrimSpace(reg.pubKey), "\n", "\n          "))
	d := deployDev(t, policy)
	registerMutatingWebhooks(t, d)
	ctx := t.Context()
	const ns = "ivpol-e2e"
	if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Namespace %s: %v", ns, err)
	}
	// No controller manager creates it: Pods need it.
	if _, err := d.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount %s/default: %v", ns, err)
	}
	createPod := func(name, image string) (*corev1.Pod, error) {
		return d.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
		}, metav1.CreateOptions{})
	}
	tag := func(d name.Digest) string { return d.Repository.Name() + ":v1" }

	t.Run("an unsigned image is blocked with the policy's message", func(t *testing.T) {
		_, err := createPod("unsigned", tag(reg.unsigned))
		for _, want := range []string{"Policy signed-images failed", "the image must be signed by the team's key"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create Pod unsigned = %v, want an error with %q", err, want)
			}
		}
	})
	t.Run("a signed image is admitted with its digest", func(t *testing.T) {
		p, err := createPod("signed", tag(reg.signed))
		if err != nil {
			t.Fatalf("create Pod signed = %v, want nil", err)
		}
		want := tag(reg.signed) + "@" + reg.signed.DigestStr()
		if got := p.Spec.Containers[0].Image; got != want {
			t.Errorf("Pod signed image = %q, want %q", got, want)
		}
	})
	t.Run("an image outside matchImageReferences is admitted as written", func(t *testing.T) {
		p, err := createPod("elsewhere", "nginx:1.27")
		if err != nil {
			t.Fatalf("create Pod elsewhere = %v, want nil", err)
		}
		if got := p.Spec.Containers[0].Image; got != "nginx:1.27" {
			t.Errorf("Pod elsewhere image = %q, want nginx:1.27", got)
		}
	})
}
