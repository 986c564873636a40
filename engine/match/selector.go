package match

import (
	"fmt"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Selector is a compiled label selector with Kyverno's wildcard extension:
// a matchLabels entry whose key or value holds '*' or '?' is satisfied by any
// label whose key and value both match it (so {"*": "*"} needs at least one
// label). Other matchLabels entries and matchExpressions (In, NotIn, Exists,
// DoesNotExist) behave as in Kubernetes. An empty selector matches every
// label set; a nil *Selector matches none.
//
// A selector that Kubernetes cannot build (a bad operator, key or value)
// never matches: Kyverno fails to build it at every evaluation and treats
// the failure as "not matched". Err returns the reason.
type Selector struct {
	exact []labelPair   // plain matchLabels entries
	wild  []pairPattern // matchLabels entries with wildcards
	exprs []requirement
	// requirements counts the entries Kyverno would hand to Kubernetes; a
	// selector without any matches everything.
	requirements int
	err          *engine.Error
}

type labelPair struct{ key, value string }

type requirement struct {
	key    string
	op     selectorOp
	values []string
}

type selectorOp uint8

const (
	opIn selectorOp = iota
	opNotIn
	opExists
	opDoesNotExist
)

// CompileSelector compiles a label selector; path locates it in the policy.
// A nil selector gives a nil *Selector, which matches nothing.
//
// The error lists what makes the selector unbuildable, with Code
// engine.CodeInvalidPolicy. The returned Selector is usable even then (it
// never matches), because Kyverno accepts such selectors in some places,
// such as a namespaceSelector or a validationFailureActionOverrides
// namespaceSelector, and only fails them at evaluation. The error covers
// only the parts that do not hold wildcards: wildcard matchLabels entries
// are resolved against the labels at evaluation.
func CompileSelector(s *kyverno.LabelSelector, path string) (*Selector, error) {
	if s == nil {
		return nil, nil
	}
	sel, errs := compileSelector(s, path)
	return sel, errs.Err()
}

func compileSelector(s *kyverno.LabelSelector, path string) (*Selector, engine.Errors) {
	sel := &Selector{requirements: len(s.MatchLabels) + len(s.MatchExpressions)}
	var errs engine.Errors
	// Sorted keys make the compiled form, and the first error, stable.
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.MatchLabels[k]
		if hasWildcard(k) || hasWildcard(v) {
			sel.wild = append(sel.wild, pairPattern{key: compilePattern(k), value: compilePattern(v)})
			continue
		}
		p := path + ".matchLabels." + k
		if msgs := content.IsLabelKey(k); len(msgs) > 0 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p, fmt.Sprintf("invalid label key %q: %s", k, strings.Join(msgs, "; "))))
		}
		if msgs := content.IsLabelValue(v); len(msgs) > 0 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p, fmt.Sprintf("invalid label value %q: %s", v, strings.Join(msgs, "; "))))
		}
		sel.exact = append(sel.exact, labelPair{key: k, value: v})
	}
	for i, e := range s.MatchExpressions {
		p := fmt.Sprintf("%s.matchExpressions[%d]", path, i)
		req := requirement{key: e.Key, values: e.Values}
		switch e.Operator {
		case "In":
			req.op = opIn
		case "NotIn":
			req.op = opNotIn
		case "Exists":
			req.op = opExists
		case "DoesNotExist":
			req.op = opDoesNotExist
		default:
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".operator", fmt.Sprintf("%q is not a valid label selector operator (want In, NotIn, Exists or DoesNotExist)", e.Operator)))
			sel.exprs = append(sel.exprs, req)
			continue
		}
		if msgs := content.IsLabelKey(e.Key); len(msgs) > 0 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".key", fmt.Sprintf("invalid label key %q: %s", e.Key, strings.Join(msgs, "; "))))
		}
		switch req.op {
		case opIn, opNotIn:
			if len(e.Values) == 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".values", "for 'In', 'NotIn' operators, values set can't be empty"))
			}
		default:
			if len(e.Values) != 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".values", "values set must be empty for 'Exists' and 'DoesNotExist'"))
			}
		}
		for j, v := range e.Values {
			if msgs := content.IsLabelValue(v); len(msgs) > 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, fmt.Sprintf("%s.values[%d]", p, j), fmt.Sprintf("invalid label value %q: %s", v, strings.Join(msgs, "; "))))
			}
		}
		sel.exprs = append(sel.exprs, req)
	}
	if len(errs) > 0 {
		sel.err = errs[0]
	}
	return sel, errs
}

// Err says why the selector cannot be built; nil for a usable selector.
func (s *Selector) Err() error {
	if s == nil || s.err == nil {
		return nil
	}
	return s.err
}

// Matches reports whether the labels satisfy the selector. It does not
// allocate.
func (s *Selector) Matches(labels map[string]string) bool {
	if s == nil || s.err != nil {
		return false
	}
	for i := range s.exact {
		v, ok := labels[s.exact[i].key]
		if !ok || v != s.exact[i].value {
			return false
		}
	}
	for i := range s.wild {
		if !s.wild[i].matchIn(labels) {
			return false
		}
	}
	for i := range s.exprs {
		if !s.exprs[i].matches(labels) {
			return false
		}
	}
	return true
}

func (r *requirement) matches(labels map[string]string) bool {
	v, ok := labels[r.key]
	switch r.op {
	case opIn:
		return ok && contains(r.values, v)
	case opNotIn:
		return !ok || !contains(r.values, v)
	case opExists:
		return ok
	default:
		return !ok
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
