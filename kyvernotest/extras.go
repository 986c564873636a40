package kyvernotest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// This file holds what the test runner reads for validate.cel and
// PolicyExceptions: the test's exceptions files and paramResources.

// exceptions loads the PolicyException files of a test and compiles them.
// As in Kyverno's CLI, a document that is not a PolicyException is an
// error.
func (l *loader) exceptions(paths []string) ([]*policy.Exception, error) {
	return loadExceptions(l, "exception", paths, kyverno.DecodeExceptions, policy.CompileException)
}

// loadExceptions reads each exceptions file once (cached under what),
// decodes its documents with decode and compiles each with compile; the
// kyverno.io and policies.kyverno.io loaders differ only in those two.
func loadExceptions[D, E any](l *loader, what string, paths []string, decode func(string, []byte) ([]D, error), compile func(D) (E, error)) ([]E, error) {
	var out []E
	for _, p := range paths {
		exs, err := cachedFile(l, what, "load exceptions", p, func(p string, data []byte) ([]E, error) {
			docs, err := decode(p, data)
			if err != nil {
				return nil, fmt.Errorf("load exceptions: %w", err)
			}
			var exs []E
			for _, d := range docs {
				ex, err := compile(d)
				if err != nil {
					return nil, fmt.Errorf("load exceptions: %s: %w", p, err)
				}
				exs = append(exs, ex)
			}
			return exs, nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, exs...)
	}
	return out, nil
}

// Namespace implements eval.Lookup: the CLI has no cluster, so CEL sees a
// Namespace with only its name, as in Kyverno's CLI.
func (l *lookup) Namespace(_ context.Context, name string) (map[string]any, error) {
	return nil, fmt.Errorf("namespace %s: no cluster in the CLI: %w", name, eval.ErrUndefined)
}

// Params implements eval.Lookup from the test's paramResources. For a
// ValidatingAdmissionPolicyBinding, as Kyverno's CLI finds them (vaps.go);
// for a validate.cel rule, as the fake cluster of Kyverno's CLI answers
// them: it knows no params kind to
// be namespaced, so paramRef.namespace is an error, a name finds only an
// object without namespace, and a selector selects in every namespace.
func (l *lookup) Params(_ context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	if q.Binding != "" {
		return l.bindingParams(q), nil // vaps.go
	}
	if q.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	var out []map[string]any
	for _, r := range l.params {
		if r.APIVersion != q.APIVersion || r.Kind != q.Kind {
			continue
		}
		if q.Name != "" {
			if r.Name == q.Name && r.Namespace == "" {
				return []map[string]any{r.Object}, nil
			}
			continue
		}
		if q.Selector != nil && q.Selector.Matches(kyverno.MetadataStrings(r.Object, "labels")) {
			out = append(out, r.Object)
		}
	}
	if q.Name != "" {
		return nil, fmt.Errorf("%ss %q not found", strings.ToLower(q.Kind), q.Name)
	}
	return out, nil
}
