package main

import (
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/host/imageverify"
)

// newImageVerifier returns the verifier of verifyImages rules for the CLI:
// registry access with the credentials of the Docker config (as cosign
// and crane use them).
func newImageVerifier() eval.ImageVerifier {
	v, err := imageverify.New(imageverify.Options{Remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}})
	if err != nil {
		return nil
	}
	return v
}
