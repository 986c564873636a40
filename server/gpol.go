package server

import (
	"errors"

	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/policy"
)

// generatingOrDeleting reports whether a document is a GeneratingPolicy,
// a DeletingPolicy or one of their namespaced kinds, and which compile
// function reads it.
func generatingOrDeleting(apiVersion, kind string) (func(string, []byte) ([]*policy.Policy, error), bool) {
	switch {
	case gpol.IsPolicy(apiVersion, kind):
		return compileGenerating, true
	case dpol.IsPolicy(apiVersion, kind):
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
func compileGenerating(source string, data []byte) ([]*policy.Policy, error) {
	docs, err := gpol.Decode(source, data)
	if err != nil {
		return nil, err
	}
	return compileAll(docs, policy.CompileGenerating)
}

// compileDeleting decodes and compiles every DeletingPolicy and
// NamespacedDeletingPolicy of data. The server holds them (ListPolicies,
// ValidatePolicies); evaluation gives them no result on requests: a
// cluster runs them on their schedule (the scanner's deletion runner).
func compileDeleting(source string, data []byte) ([]*policy.Policy, error) {
	docs, err := dpol.Decode(source, data)
	if err != nil {
		return nil, err
	}
	return compileAll(docs, policy.CompileDeleting)
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
