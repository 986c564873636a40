// Package imageverify implements eval.ImageVerifier with cosign
// (github.com/sigstore/cosign/v3) and go-containerregistry: it checks
// key-based and keyless (certificate identities chained to given roots,
// or to Sigstore's public Fulcio roots) signatures and in-toto
// attestations of images in OCI registries, and notary signatures of
// images and of their OCI referrers (github.com/notaryproject/notation-go,
// read through go-containerregistry: notary.go), and caches successful checks in a bounded LRU keyed by the
// image digest, the check (key, options) and the policy version.
//
// Read first: Verifier, Options. The engine (engine/...) must not import
// this package: it reaches it only through the eval.ImageVerifier
// interface, so that the engine stays free of network code.
package imageverify
