package imageverify

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/trustpolicy"
	"github.com/notaryproject/notation-go/verifier/truststore"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// maxNotarySignatures bounds the signatures of an image a notary check
// tries, as Kyverno does (notation.VerifyOptions.MaxSignatureAttempts).
const maxNotarySignatures = 10

// maxNotaryBlob bounds the size of a notary signature envelope, or of a
// referrer's data, read from a registry (4 MiB).
const maxNotaryBlob = 4 << 20

// verifyNotary checks the notary signatures of pinned against the CA
// certificates (and timestamping authorities) of a check, as Kyverno's
// ivpol notary verifier does: a trust policy of every registry scope at
// the strict level, trusting every identity those certificates issue.
func (v *Verifier) verifyNotary(ctx context.Context, pinned name.Digest, c notaryCheck) error {
	certs, err := cryptoutils.LoadCertificatesFromPEM(bytes.NewReader([]byte(c.certs)))
	if err != nil {
		return fmt.Errorf("notary certificates: %w", err)
	}
	if len(certs) == 0 {
		return errors.New("notary certificates: none")
	}
	var tsa []*x509.Certificate
	if c.tsaCerts != "" {
		if tsa, err = cryptoutils.LoadCertificatesFromPEM(bytes.NewReader([]byte(c.tsaCerts))); err != nil {
			return fmt.Errorf("notary TSA certificates: %w", err)
		}
	}
	stores := []string{"ca:verdict"}
	if len(tsa) > 0 {
		stores = append(stores, "tsa:verdict")
	}
	policy := &trustpolicy.Document{
		Version: "1.0",
		TrustPolicies: []trustpolicy.TrustPolicy{{
			Name:                  "verdict",
			RegistryScopes:        []string{"*"},
			SignatureVerification: trustpolicy.SignatureVerification{VerificationLevel: trustpolicy.LevelStrict.Name},
			TrustStores:           stores,
			TrustedIdentities:     []string{"*"},
		}},
	}
	nv, err := verifier.New(policy, trustStore{ca: certs, tsa: tsa}, nil)
	if err != nil {
		return fmt.Errorf("notary verifier: %w", err)
	}
	repo := &notaryRepository{ctx: ctx, repo: pinned.Context(), opts: v.remoteOpts(ctx)}
	_, outcomes, err := notation.Verify(ctx, nv, repo, notation.VerifyOptions{
		ArtifactReference:    pinned.String(),
		MaxSignatureAttempts: maxNotarySignatures,
	})
	if err != nil {
		return fmt.Errorf("notary: %w", err)
	}
	var errs []error
	for _, o := range outcomes {
		if o.Error != nil {
			errs = append(errs, o.Error)
		}
	}
	return errors.Join(errs...)
}

// verifyNotaryReferrer checks the OCI referrers of pinned of
// artifactType, as Kyverno's ivpol notary verifier checks an attestation:
// the first whose notary signature verifies gives its data (the one
// layer of its manifest, JSON). No referrer of the type is an error.
func (v *Verifier) verifyNotaryReferrer(ctx context.Context, pinned name.Digest, artifactType string, c notaryCheck) (any, error) {
	repo := &notaryRepository{ctx: ctx, repo: pinned.Context(), opts: v.remoteOpts(ctx)}
	idx, err := remote.Referrers(pinned, append(repo.opts, remote.WithFilter("artifactType", artifactType))...)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", pinned, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", pinned, err)
	}
	var errs []error
	for _, d := range m.Manifests {
		if d.ArtifactType != artifactType {
			continue
		}
		ref := pinned.Context().Digest(d.Digest.String())
		if err := v.verifyNotary(ctx, ref, c); err != nil {
			errs = append(errs, fmt.Errorf("referrer %s: %w", d.Digest, err))
			continue
		}
		b, _, err := repo.FetchSignatureBlob(ctx, ociDescriptor(d))
		if err != nil {
			return nil, fmt.Errorf("referrer %s: %w", d.Digest, err)
		}
		var data any
		if err := json.Unmarshal(b, &data); err != nil {
			return nil, fmt.Errorf("failed to unmarshal json of referrer %s: %w", d.Digest, err)
		}
		return data, nil
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("attestation verification failed, no attestations found for type: %s", artifactType)
	}
	return nil, errors.Join(errs...)
}

// notaryCheck is what a notary check reads of an ImageCheck.
type notaryCheck struct{ certs, tsaCerts string }

// trustStore holds the certificates of one check.
type trustStore struct{ ca, tsa []*x509.Certificate }

func (s trustStore) GetCertificates(_ context.Context, t truststore.Type, name string) ([]*x509.Certificate, error) {
	if name != "verdict" {
		return nil, fmt.Errorf("trust store %s not found", name)
	}
	switch t {
	case truststore.TypeCA:
		return s.ca, nil
	case truststore.TypeTSA:
		return s.tsa, nil
	}
	return nil, fmt.Errorf("no %s certificates", t)
}

// notaryRepository reads the notary signatures of a repository with
// go-containerregistry (the verifier's registry options, credentials
// included): the referrers of the artifact, then each signature
// manifest's envelope.
type notaryRepository struct {
	ctx  context.Context
	repo name.Repository
	opts []remote.Option
}

var _ notationregistry.Repository = (*notaryRepository)(nil)

// Resolve resolves a digest or tag of the repository (notation passes the
// reference part only), or a full reference.
func (r *notaryRepository) Resolve(_ context.Context, reference string) (ocispec.Descriptor, error) {
	var ref name.Reference
	switch {
	case strings.HasPrefix(reference, "sha256:"):
		ref = r.repo.Digest(reference)
	case !strings.ContainsAny(reference, "/:@"):
		ref = r.repo.Tag(reference)
	default:
		var err error
		if ref, err = name.ParseReference(reference); err != nil {
			return ocispec.Descriptor{}, err
		}
	}
	d, err := remote.Head(ref, r.opts...)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return ociDescriptor(*d), nil
}

func (r *notaryRepository) ListSignatures(_ context.Context, desc ocispec.Descriptor, fn func([]ocispec.Descriptor) error) error {
	idx, err := remote.Referrers(r.repo.Digest(desc.Digest.String()), append(r.opts, remote.WithFilter("artifactType", notationregistry.ArtifactTypeNotation))...)
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	out := make([]ocispec.Descriptor, 0, len(m.Manifests))
	for _, d := range m.Manifests {
		if d.ArtifactType == notationregistry.ArtifactTypeNotation {
			out = append(out, ociDescriptor(d))
		}
	}
	return fn(out)
}

func (r *notaryRepository) FetchSignatureBlob(_ context.Context, desc ocispec.Descriptor) ([]byte, ocispec.Descriptor, error) {
	img, err := remote.Image(r.repo.Digest(desc.Digest.String()), r.opts...)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	if len(m.Layers) != 1 {
		return nil, ocispec.Descriptor{}, fmt.Errorf("manifest %s has %d layers, want 1", desc.Digest, len(m.Layers))
	}
	layer := m.Layers[0]
	if layer.Size > maxNotaryBlob {
		return nil, ocispec.Descriptor{}, fmt.Errorf("blob of %d bytes, over %d", layer.Size, maxNotaryBlob)
	}
	l, err := img.LayerByDigest(layer.Digest)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxNotaryBlob+1))
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	if len(b) > maxNotaryBlob {
		return nil, ocispec.Descriptor{}, fmt.Errorf("blob over %d bytes", maxNotaryBlob)
	}
	return b, ociDescriptor(layer), nil
}

func (r *notaryRepository) PushSignature(context.Context, string, []byte, ocispec.Descriptor, map[string]string) (ocispec.Descriptor, ocispec.Descriptor, error) {
	return ocispec.Descriptor{}, ocispec.Descriptor{}, errors.New("the verifier does not push signatures")
}

// ociDescriptor converts a go-containerregistry descriptor.
func ociDescriptor(d v1.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{
		MediaType:    string(d.MediaType),
		Digest:       digestOf(d.Digest),
		Size:         d.Size,
		Annotations:  d.Annotations,
		ArtifactType: d.ArtifactType,
	}
}

func digestOf(h v1.Hash) digest.Digest { return digest.Digest(h.String()) }
