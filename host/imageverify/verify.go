package imageverify

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/cosign/v3/pkg/oci"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	rekorclient "github.com/sigstore/rekor/pkg/client"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/fulcioroots"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/tuf"

	"github.com/verdict-policy/verdict/engine/eval"
)

// DefaultCacheSize is the number of verified checks kept when
// Options.CacheSize is 0.
const DefaultCacheSize = 1024

// Options configure a Verifier.
type Options struct {
	// CacheSize bounds the cache of successful checks (DefaultCacheSize
	// when 0; a negative size disables the cache).
	CacheSize int
	// Remote are go-containerregistry options for every registry call
	// (authentication, transport). Default: anonymous access.
	Remote []remote.Option
}

// Verifier is an eval.ImageVerifier. It is safe for concurrent use.
type Verifier struct {
	remote []remote.Option
	cache  *lru.Cache[string, *eval.ImageVerified]
}

var _ eval.ImageVerifier = (*Verifier)(nil)

// New returns a Verifier.
func New(opts Options) (*Verifier, error) {
	v := &Verifier{remote: opts.Remote}
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	if size > 0 {
		c, err := lru.New[string, *eval.ImageVerified](size)
		if err != nil {
			return nil, fmt.Errorf("image verification cache: %w", err)
		}
		v.cache = c
	}
	return v, nil
}

func (v *Verifier) remoteOpts(ctx context.Context) []remote.Option {
	return append([]remote.Option{remote.WithContext(ctx)}, v.remote...)
}

// ImageDigest resolves image to its manifest digest (a HEAD request, or
// the digest of a reference that has one).
func (v *Verifier) ImageDigest(ctx context.Context, image string) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("bad image reference %s: %w", image, err)
	}
	if d, ok := ref.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	desc, err := remote.Head(ref, v.remoteOpts(ctx)...)
	if err != nil {
		return "", fmt.Errorf("resolve digest of %s: %w", image, err)
	}
	return desc.Digest.String(), nil
}

// VerifyImage implements eval.ImageVerifier.
func (v *Verifier) VerifyImage(ctx context.Context, c eval.ImageCheck) (*eval.ImageVerified, error) {
	ref, err := name.ParseReference(c.Image)
	if err != nil {
		return nil, fmt.Errorf("bad image reference %s: %w", c.Image, err)
	}
	digest, err := v.ImageDigest(ctx, c.Image)
	if err != nil {
		return nil, err
	}
	pinned := ref.Context().Digest(digest)
	key := cacheKey(c, pinned.String())
	if v.cache != nil {
		if res, ok := v.cache.Get(key); ok {
			return res, nil
		}
	}
	res := &eval.ImageVerified{Digest: digest}
	if c.NotaryCerts != "" {
		if c.PredicateType != "" {
			return nil, errors.New("notary checks have no in-toto attestations")
		}
		nc := notaryCheck{certs: c.NotaryCerts, tsaCerts: c.NotaryTSACerts}
		if c.ReferrerType == "" {
			if err := v.verifyNotary(ctx, pinned, nc); err != nil {
				return nil, err
			}
		} else {
			data, err := v.verifyNotaryReferrer(ctx, pinned, c.ReferrerType, nc)
			if err != nil {
				return nil, err
			}
			res.Statements = []map[string]any{{"predicateType": c.ReferrerType, "predicate": data}}
		}
		if v.cache != nil {
			v.cache.Add(key, res)
		}
		return res, nil
	}
	co, err := v.checkOpts(ctx, c)
	if err != nil {
		return nil, err
	}
	if c.PredicateType == "" {
		if _, _, err := cosign.VerifyImageSignatures(ctx, pinned, co); err != nil {
			return nil, err
		}
	} else {
		sigs, _, err := cosign.VerifyImageAttestations(ctx, pinned, co)
		if err != nil {
			return nil, err
		}
		for _, s := range sigs {
			st, err := decodeStatement(s)
			if err != nil {
				return nil, err
			}
			res.Statements = append(res.Statements, st)
		}
	}
	if v.cache != nil {
		v.cache.Add(key, res)
	}
	return res, nil
}

func (v *Verifier) checkOpts(ctx context.Context, c eval.ImageCheck) (*cosign.CheckOpts, error) {
	ropts := []ociremote.Option{ociremote.WithRemoteOptions(v.remoteOpts(ctx)...)}
	if c.Repository != "" {
		repo, err := name.NewRepository(c.Repository)
		if err != nil {
			return nil, fmt.Errorf("bad repository %s: %w", c.Repository, err)
		}
		ropts = append(ropts, ociremote.WithTargetRepository(repo))
	}
	co := &cosign.CheckOpts{
		RegistryClientOpts: ropts,
		IgnoreTlog:         c.IgnoreTlog,
		IgnoreSCT:          c.IgnoreSCT,
		ClaimVerifier:      cosign.SimpleClaimVerifier,
	}
	if c.PredicateType != "" {
		co.ClaimVerifier = cosign.IntotoSubjectClaimVerifier
	}
	if len(c.Annotations) > 0 {
		co.Annotations = map[string]any{}
		for k, val := range c.Annotations {
			co.Annotations[k] = val
		}
	}
	if c.PublicKey == "" {
		if err := keylessOpts(co, c); err != nil {
			return nil, err
		}
	} else {
		hash, err := hashOf(c.SignatureAlgorithm)
		if err != nil {
			return nil, err
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(strings.TrimSpace(c.PublicKey)))
		if err != nil {
			return nil, fmt.Errorf("pem to public key: %w", err)
		}
		co.SigVerifier, err = signature.LoadVerifier(pub, hash)
		if err != nil {
			return nil, fmt.Errorf("load public key: %w", err)
		}
	}
	var err error
	if !c.IgnoreTlog {
		url := c.RekorURL
		if url == "" {
			url = "https://rekor.sigstore.dev"
		}
		co.RekorClient, err = rekorclient.GetRekorClient(url)
		if err != nil {
			return nil, fmt.Errorf("rekor client: %w", err)
		}
		if c.RekorPubKey != "" {
			keys := cosign.NewTrustedTransparencyLogPubKeys()
			if err := keys.AddTransparencyLogPubKey([]byte(c.RekorPubKey), tuf.Active); err != nil {
				return nil, fmt.Errorf("rekor public key: %w", err)
			}
			co.RekorPubKeys = &keys
		} else if co.RekorPubKeys, err = cosign.GetRekorPubs(ctx); err != nil {
			return nil, fmt.Errorf("rekor public keys: %w", err)
		}
	}
	return co, nil
}

// keylessOpts sets the options of a keyless check: the identities, and
// the roots (and intermediates) the signature's certificate must chain
// to: those of c.Roots, or Sigstore's public Fulcio roots.
func keylessOpts(co *cosign.CheckOpts, c eval.ImageCheck) error {
	if len(c.Identities) == 0 {
		return errors.New("a check needs a public key or keyless identities")
	}
	for _, id := range c.Identities {
		co.Identities = append(co.Identities, cosign.Identity{Issuer: id.Issuer, Subject: id.Subject, IssuerRegExp: id.IssuerRegExp, SubjectRegExp: id.SubjectRegExp})
	}
	if strings.TrimSpace(c.Roots) == "" {
		var err error
		if co.RootCerts, err = fulcioroots.Get(); err != nil {
			return fmt.Errorf("fulcio roots: %w", err)
		}
		if co.IntermediateCerts, err = fulcioroots.GetIntermediates(); err != nil {
			return fmt.Errorf("fulcio intermediates: %w", err)
		}
		return nil
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(c.Roots))
	if err != nil {
		return fmt.Errorf("keyless roots: %w", err)
	}
	if len(certs) == 0 {
		return errors.New("keyless roots: no certificate")
	}
	co.RootCerts = x509.NewCertPool()
	for _, cert := range certs {
		if cert.CheckSignatureFrom(cert) == nil {
			co.RootCerts.AddCert(cert)
			continue
		}
		if co.IntermediateCerts == nil {
			co.IntermediateCerts = x509.NewCertPool()
		}
		co.IntermediateCerts.AddCert(cert)
	}
	return nil
}

func hashOf(alg string) (crypto.Hash, error) {
	switch strings.ToLower(alg) {
	case "", "sha256":
		return crypto.SHA256, nil
	case "sha224":
		return crypto.SHA224, nil
	case "sha384":
		return crypto.SHA384, nil
	case "sha512":
		return crypto.SHA512, nil
	}
	return 0, fmt.Errorf("unknown signature algorithm %q", alg)
}

// cacheKey identifies a check of a pinned image: everything that can
// change its outcome, including the policy version.
func cacheKey(c eval.ImageCheck, pinned string) string {
	c.Image = pinned
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// decodeStatement decodes the in-toto statement of a DSSE attestation, as
// Kyverno does: "type" is set to the predicateType.
func decodeStatement(sig oci.Signature) (map[string]any, error) {
	pld, err := sig.Payload()
	if err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(pld, &env); err != nil {
		return nil, fmt.Errorf("decode attestation envelope: %w", err)
	}
	if env.Payload == "" {
		return nil, errors.New("missing payload in attestation")
	}
	raw, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("decode attestation payload: %w", err)
	}
	st := map[string]any{}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("decode in-toto statement: %w", err)
	}
	st["type"] = st["predicateType"]
	if s, ok := st["predicate"].(map[string]any); ok {
		// cosign's custom predicate carries its data as a JSON string.
		if data, ok := s["Data"].(string); ok && st["predicateType"] == "https://cosign.sigstore.dev/attestation/v1" {
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) == nil {
				s["Data"] = m
			}
		}
	}
	return st, nil
}
