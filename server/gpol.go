package server

import (
	"errors"
	"fmt"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// generatingOrDeleting reports whether a document is a GeneratingPolicy,
// a DeletingPolicy or one of their namespaced kinds, and which compile
// function reads it.
func generatingOrDeleting(apiVersion, kind string) (func(string, []byte) ([]*policy.Policy, error), bool) {
	switch {
	case gpol.Policies.IsPolicy(apiVersion, kind):
		return compileGenerating, true
	case dpol.Policies.IsPolicy(apiVersion, kind):
		return compileDeleting, true
	}
	return nil, false
}

// clusterWide reports whether kind is the cluster-wide GeneratingPolicy or
// DeletingPolicy (their namespaced kinds need a namespace).
func clusterWide(kind string) bool {
	return kind == gpol.KindGeneratingPolicy || kind == dpol.KindDeletingPolicy
}

// compileGenerating decodes and compiles every GeneratingPolicy and
// NamespacedGeneratingPolicy of data.
var compileGenerating = compilerOf(gpol.Policies.Decode, policy.CompileGenerating)

// compileDeleting decodes and compiles every DeletingPolicy and
// NamespacedDeletingPolicy of data. The server holds them (ListPolicies,
// ValidatePolicies); evaluation gives them no result on requests: a
// cluster runs them on their schedule (the scanner's deletion runner).
var compileDeleting = compilerOf(dpol.Policies.Decode, policy.CompileDeleting)

// compilerOf is the compile function of a kind: decode its documents of
// data, then compileAll with compile.
func compilerOf[D any](decode func(source string, data []byte) ([]D, error), compile func(D) (*policy.Policy, error)) func(source string, data []byte) ([]*policy.Policy, error) {
	return func(source string, data []byte) ([]*policy.Policy, error) {
		docs, err := decode(source, data)
		if err != nil {
			return nil, err
		}
		return compileAll(docs, compile)
	}
}

// compileOne decodes the one document of data (what names its kind, in
// the plural, in the error when data holds another number) and compiles
// it.
func compileOne[D, T any](source string, data []byte, what string, decode func(source string, data []byte) ([]D, error), compile func(D) (T, error)) (T, error) {
	docs, err := decode(source, data)
	if err != nil {
		var zero T
		return zero, err
	}
	if len(docs) != 1 {
		var zero T
		return zero, engine.Errorf(engine.CodeDecode, "", fmt.Sprintf("document holds %d %s, want 1", len(docs), what))
	}
	return compile(docs[0])
}

// compileAll compiles every document with compile; the errors of all
// are joined.
func compileAll[D any](docs []D, compile func(D) (*policy.Policy, error)) ([]*policy.Policy, error) {
	out := make([]*policy.Policy, 0, len(docs))
	var errs []error
	for _, d := range docs {
		p, err := compile(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
