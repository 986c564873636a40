package manifests

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Key is a public key that verifies signatures as cosign verify-blob
// --key does: SHA-256, ECDSA, RSA PKCS#1 v1.5 or Ed25519.
type Key struct {
	pub crypto.PublicKey
}

// ParsePublicKey parses a PEM "PUBLIC KEY" block (PKIX) holding an ECDSA,
// RSA or Ed25519 key.
func ParsePublicKey(s string) (*Key, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil {
		return nil, errors.New("not a PEM public key")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		if k, err2 := x509.ParsePKCS1PublicKey(block.Bytes); err2 == nil {
			return &Key{pub: k}, nil
		}
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	switch pub.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return &Key{pub: pub}, nil
	}
	return nil, fmt.Errorf("unsupported public key type %T", pub)
}

// verify checks the base64 signature sig of msg, with sigstore's
// messages.
func (k *Key) verify(msg []byte, sig string) error {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return fmt.Errorf("decoding base64 signature: %w", err)
	}
	switch pub := k.pub.(type) {
	case *ecdsa.PublicKey:
		digest := sha256.Sum256(msg)
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(raw, &rs); err == nil {
			if !ecdsa.VerifyASN1(pub, digest[:], raw) {
				return errors.New("invalid signature when validating ASN.1 encoded signature")
			}
			return nil
		}
		if len(raw) == 0 || len(raw) > 132 || len(raw)%2 != 0 {
			return errors.New("ecdsa: Invalid IEEE_P1363 encoded bytes")
		}
		r := new(big.Int).SetBytes(raw[:len(raw)/2])
		s := new(big.Int).SetBytes(raw[len(raw)/2:])
		if !ecdsa.Verify(pub, digest[:], r, s) {
			return errors.New("invalid signature when validating IEEE_P1363 encoded signature")
		}
		return nil
	case *rsa.PublicKey:
		digest := sha256.Sum256(msg)
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], raw)
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, msg, raw) {
			return errors.New("failed to verify signature")
		}
		return nil
	}
	return fmt.Errorf("unsupported public key type %T", k.pub)
}
