package server

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// evalState is what the data source guards know of the evaluation in
// progress (withEvalState): whether its policies came inline, and the
// data source calls made so far.
type evalState struct {
	inline bool
	// noImages refuses ImageVerifier calls: the inline policies hold an
	// ImageValidatingPolicy and Options.ImageVerifyInlinePolicies is
	// false.
	noImages bool
	calls    atomic.Int32
}

type evalStateKey struct{}

// withEvalState starts the state of one evaluation.
func withEvalState(ctx context.Context, inline bool) context.Context {
	return context.WithValue(ctx, evalStateKey{}, &evalState{inline: inline})
}

// celGuard wraps the data sources of the CEL libraries with the limits
// that depend on the request (Options): the calls of one evaluation
// (MaxCELDataCalls), and http.* calls from inline and namespaced policies
// (CELHTTPInlinePolicies, CELHTTPNamespacedPolicies).
type celGuard struct {
	maxCalls              int
	httpInline, httpNsPol bool
}

// count counts a call of the evaluation of ctx, and refuses it past the
// limit.
func (g celGuard) count(ctx context.Context, call string) error {
	st, _ := ctx.Value(evalStateKey{}).(*evalState)
	if st == nil {
		return nil
	}
	if n := int(st.calls.Add(1)); n > g.maxCalls {
		return fmt.Errorf("%s: refused: the evaluation made %d calls to data sources, the server allows %d (--max-cel-data-calls)", call, n-1, g.maxCalls)
	}
	return nil
}

// httpAllowed refuses http.* calls from the policies that may not make
// them, then counts the call.
func (g celGuard) httpAllowed(ctx context.Context, call string) error {
	if st, _ := ctx.Value(evalStateKey{}).(*evalState); st != nil && st.inline && !g.httpInline {
		return fmt.Errorf("%s: refused: http calls are not allowed in inline policies (--cel-http-inline-policies)", call)
	}
	if p, ok := kyvernocel.CallingPolicy(ctx); ok && p.Namespace != "" && !g.httpNsPol {
		return fmt.Errorf("%s: refused: http calls are not allowed in namespaced policies (%s %s/%s; --cel-http-namespaced-policies)", call, p.Kind, p.Namespace, p.Name)
	}
	return g.count(ctx, call)
}

// sources wraps each source of src.
func (g celGuard) sources(src kyvernocel.Sources) kyvernocel.Sources {
	if src.Resources != nil {
		src.Resources = guardedResources{g, src.Resources}
	}
	if src.HTTP != nil {
		src.HTTP = guardedHTTP{g, src.HTTP}
	}
	if src.ImageData != nil {
		src.ImageData = guardedImageData{g, src.ImageData}
	}
	return src
}

type guardedResources struct {
	g celGuard
	r kyvernocel.Resources
}

func (s guardedResources) GetResource(ctx context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	if err := s.g.count(ctx, fmt.Sprintf("resource.Get(%q, %q, %q, %q)", apiVersion, resource, namespace, name)); err != nil {
		return nil, err
	}
	return s.r.GetResource(ctx, apiVersion, resource, namespace, name)
}

func (s guardedResources) ListResources(ctx context.Context, apiVersion, resource, namespace string, labels map[string]string) (map[string]any, error) {
	if err := s.g.count(ctx, fmt.Sprintf("resource.List(%q, %q, %q)", apiVersion, resource, namespace)); err != nil {
		return nil, err
	}
	return s.r.ListResources(ctx, apiVersion, resource, namespace, labels)
}

// ListAllNamespaces implements eval.AllNamespacesLister.
func (s guardedResources) ListAllNamespaces(ctx context.Context, apiVersion, resource string) ([]map[string]any, error) {
	if err := s.g.count(ctx, fmt.Sprintf("list %s %s in every namespace", apiVersion, resource)); err != nil {
		return nil, err
	}
	return eval.ListAllNamespaces(ctx, s.r, apiVersion, resource)
}

func (s guardedResources) PostResource(ctx context.Context, apiVersion, resource, namespace string, data map[string]any) (map[string]any, error) {
	if err := s.g.count(ctx, fmt.Sprintf("resource.Post(%q, %q, %q)", apiVersion, resource, namespace)); err != nil {
		return nil, err
	}
	return s.r.PostResource(ctx, apiVersion, resource, namespace, data)
}

type guardedHTTP struct {
	g celGuard
	h kyvernocel.HTTP
}

func (s guardedHTTP) Get(ctx context.Context, url string, headers map[string]string) (any, error) {
	if err := s.g.httpAllowed(ctx, fmt.Sprintf("http.Get(%q)", url)); err != nil {
		return nil, err
	}
	return s.h.Get(ctx, url, headers)
}

func (s guardedHTTP) Post(ctx context.Context, url string, body any, headers map[string]string) (any, error) {
	if err := s.g.httpAllowed(ctx, fmt.Sprintf("http.Post(%q)", url)); err != nil {
		return nil, err
	}
	return s.h.Post(ctx, url, body, headers)
}

func (s guardedHTTP) Client(caBundle string) (kyvernocel.HTTP, error) {
	h, err := s.h.Client(caBundle)
	if err != nil {
		return nil, err
	}
	return guardedHTTP{s.g, h}, nil
}

type guardedImageData struct {
	g celGuard
	d kyvernocel.ImageData
}

func (s guardedImageData) ImageData(ctx context.Context, image string) (map[string]any, error) {
	if err := s.g.count(ctx, fmt.Sprintf("image.GetMetadata(%q)", image)); err != nil {
		return nil, err
	}
	return s.d.ImageData(ctx, image)
}

// guardedVerifier refuses the registry calls of an evaluation whose
// inline policies hold an ImageValidatingPolicy, unless
// Options.ImageVerifyInlinePolicies (evalState.noImages).
type guardedVerifier struct{ v eval.ImageVerifier }

// errInlineImages is the error of a refused registry call.
var errInlineImages = errors.New("refused: registry calls are not allowed in inline ImageValidatingPolicies (--verify-images-inline-policies)")

func imagesRefused(ctx context.Context) bool {
	st, _ := ctx.Value(evalStateKey{}).(*evalState)
	return st != nil && st.noImages
}

func (g guardedVerifier) VerifyImage(ctx context.Context, check eval.ImageCheck) (*eval.ImageVerified, error) {
	if imagesRefused(ctx) {
		return nil, fmt.Errorf("verify %s: %w", check.Image, errInlineImages)
	}
	return g.v.VerifyImage(ctx, check)
}

func (g guardedVerifier) ImageDigest(ctx context.Context, image string) (string, error) {
	if imagesRefused(ctx) {
		return "", fmt.Errorf("digest of %s: %w", image, errInlineImages)
	}
	return g.v.ImageDigest(ctx, image)
}
