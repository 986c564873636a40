package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// caseExceptions compiles the PolicyExceptions of a case.
func caseExceptions(tc testCase) ([]*policy.Exception, error) {
	if tc.Exceptions == "" {
		return nil, nil
	}
	docs, err := kyverno.DecodeExceptions(tc.Note, []byte(tc.Exceptions))
	if err != nil {
		return nil, err
	}
	var out []*policy.Exception
	for _, d := range docs {
		ex, err := policy.CompileException(d)
		if err != nil {
			return nil, err
		}
		out = append(out, ex)
	}
	return out, nil
}

// Namespace: the cases have no cluster, as Kyverno's CLI.
func (m mapLookup) Namespace(context.Context, string) (map[string]any, error) {
	return nil, eval.ErrUndefined
}

// Params serves the case's params: by kind, namespace (paramRef's or the
// request's) and name or selector.
func (m mapLookup) Params(_ context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	if m.cli && q.Binding != "" {
		return m.cliBindingParams(q), nil // vap_cases_test.go
	}
	ns := q.Namespace
	if ns == "" {
		ns = q.RequestNamespace
	}
	var out []map[string]any
	for _, p := range m.params {
		meta, _ := p["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		pns, _ := meta["namespace"].(string)
		if p["apiVersion"] != q.APIVersion || p["kind"] != q.Kind || pns != ns {
			continue
		}
		if q.Name != "" {
			if name == q.Name {
				return []map[string]any{p}, nil
			}
			continue
		}
		labels := map[string]string{}
		if l, ok := meta["labels"].(map[string]any); ok {
			for k, v := range l {
				labels[k], _ = v.(string)
			}
		}
		if q.Selector != nil && q.Selector.Matches(labels) {
			out = append(out, p)
		}
	}
	if q.Name != "" {
		return nil, fmt.Errorf("%ss %q not found", strings.ToLower(q.Kind), q.Name)
	}
	return out, nil
}
