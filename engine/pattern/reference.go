package pattern

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
)

// Kyverno's expressions for $(...) references and escaped \$(...) ones
// (pkg/engine/variables/regex). They run once per policy, never per request.
var (
	referenceRE        = regexp.MustCompile(`^\$\(.[^\ ]*\)|[^\\]\$\(.[^\ ]*\)`)
	escapedReferenceRE = regexp.MustCompile(`\\\$\(.[^\ \)]*\)`)
)

// ResolveReferences replaces the $(...) references of a pattern with the
// pattern values they point to, as Kyverno does at evaluation before
// substituting {{ }} variables (variables.substituteReferences). A reference
// names a path in the pattern document itself, relative to the string that
// holds it ("$(./../../limits/memory)") or absolute, optionally after an
// operator ("$(<=./../limits/memory)" gives "<=2048Mi"); anchors in the
// target path are ignored. An escaped reference "\$(...)" loses its
// backslash and is kept as text.
//
// doc is the document Kyverno resolves against at evaluation:
// validate.pattern, or the entire validate.anyPattern list (absolute paths
// then start with the pattern's index), or a foreach pattern. Call it on the
// policy as written, before substituting variables, so that a variable's
// value is never read as a reference; the result depends only on the
// policy. It shares no maps or lists with doc when it differs.
//
// Kyverno reports a reference that does not resolve (no value at that path,
// a non-string value without an operator, an empty path) when it evaluates
// the rule, as a rule error "variable substitution failed: " + the error's
// Message; the error has code engine.CodeVariableNotResolved and the Path
// inside doc of the string that holds the reference. Most such policies are
// rejected earlier by CheckReferences.
//
// When several pattern values share a path once anchors are removed
// ("(name)" and "name"), or a reference points to a map (Kyverno then reads
// one of its keys), Kyverno picks by Go's random map order; Verdict walks keys
// in sorted order and takes the last, as Kyverno's walk would in that order.
func ResolveReferences(doc any) (any, error) {
	return resolveReferences(doc, "", engine.CodeVariableNotResolved)
}

// CheckReferences resolves references the way Kyverno's policy validation
// does, which rejects the policy ("policy contains invalid variables") when
// one fails: Kyverno then resolves against the whole rule, so doc is taken to
// sit at Kyverno path at inside it ("/validate/pattern",
// "/validate/anyPattern", "/validate/foreach/0/pattern"). An absolute
// reference must therefore start with at to pass this check (and then fails
// at evaluation, where the pattern is the whole document); relative ones
// behave as in ResolveReferences. References reaching outside doc, to other
// fields of the rule, are reported as unresolved here. Errors have code
// engine.CodeInvalidVariable and the Path inside doc.
func CheckReferences(doc any, at string) error {
	_, err := resolveReferences(doc, strings.TrimSuffix(at, "/"), engine.CodeInvalidVariable)
	return err
}

func resolveReferences(doc any, at string, code engine.Code) (any, error) {
	if !hasReferences(doc) {
		return doc, nil
	}
	r := refResolver{values: map[string]any{}, code: code}
	r.index(doc, at)
	return r.walk(doc, at, nil)
}

type refResolver struct {
	// values maps each path of the original document, anchors removed, to
	// the value Kyverno's getValueFromReference finds there.
	values map[string]any
	code   engine.Code
}

// refChild is the path Kyverno's traversal gives to a map value.
func refChild(p, key string) string {
	return p + "/" + strings.ReplaceAll(key, "/", `\/`)
}

// index records every leaf and every map key (at the map's own path) the
// way Kyverno's traversal visits them, the last visit winning.
func (r *refResolver) index(v any, p string) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			r.values[removeAnchorsFromPath(p)] = k
			r.index(t[k], refChild(p, k))
		}
	case []any:
		for i, e := range t {
			r.index(e, p+"/"+strconv.Itoa(i))
		}
	default:
		r.values[removeAnchorsFromPath(p)] = t
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// removeAnchorsFromPath is Kyverno's anchor.RemoveAnchorsFromPath.
func removeAnchorsFromPath(s string) string {
	parts := strings.Split(s, "/")
	if parts[0] == "" {
		parts = parts[1:]
	}
	for i, part := range parts {
		if kind, key := parseAnchor(part); kind != anchorNone {
			parts[i] = key
		}
	}
	out := path.Join(parts...)
	if path.IsAbs(s) {
		out = "/" + out
	}
	return out
}

func (r *refResolver) walk(v any, p string, cp *cpath) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		var renamed map[string]bool
		for _, k := range sortedKeys(t) {
			kp := &cpath{parent: cp, key: k, idx: -1}
			nk, err := r.substitute(k, p, kp)
			if err != nil {
				return nil, err
			}
			nv, err := r.walk(t[k], refChild(p, k), kp)
			if err != nil {
				return nil, err
			}
			if nk != k {
				// Kyverno writes a renamed key over the key it collides
				// with, whichever its map walk meets first.
				if renamed == nil {
					renamed = map[string]bool{}
				}
				renamed[nk] = true
			} else if renamed[k] {
				continue
			}
			out[nk] = nv
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			nv, err := r.walk(e, p+"/"+strconv.Itoa(i), &cpath{parent: cp, idx: i})
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case string:
		return r.substitute(t, p, cp)
	}
	return v, nil
}

// substitute is Kyverno's substituteReferencesIfAny for one string found at
// Kyverno path p.
func (r *refResolver) substitute(s, p string, cp *cpath) (string, error) {
	if !strings.Contains(s, "$(") {
		return s, nil
	}
	for _, v := range referenceRE.FindAllString(s, -1) {
		initial := v[:2] == "$("
		old := v
		if !initial {
			v = v[1:]
		}
		resolved, err := r.resolve(v, p)
		if err != nil {
			return "", r.fail(cp, fmt.Sprintf("failed to resolve %v at path %s: %v", v, p, err))
		}
		if resolved == nil {
			return "", r.fail(cp, fmt.Sprintf("got nil resolved variable %v at path %s: <nil>", v, p))
		}
		str, ok := resolved.(string)
		if !ok {
			return "", r.fail(cp, fmt.Sprintf("NotResolvedReferenceErr,reference %s not resolved at path %s", v, p))
		}
		replacement := ""
		if !initial {
			replacement = string(rune(old[0])) // Kyverno's string(old[0])
		}
		s = strings.Replace(s, old, replacement+str, 1)
	}
	for _, v := range escapedReferenceRE.FindAllString(s, -1) {
		s = strings.ReplaceAll(s, v, v[1:])
	}
	return s, nil
}

func (r *refResolver) fail(cp *cpath, msg string) error {
	return engine.Errorf(r.code, cp.String(), msg)
}

// resolve is Kyverno's resolveReference.
func (r *refResolver) resolve(reference, abs string) (any, error) {
	p := strings.Trim(reference, "$()")
	op := operatorOf(p)
	p = p[len(op.String()):]
	if p == "" {
		return nil, errors.New("expected path, found empty reference")
	}
	if !path.IsAbs(p) {
		p = path.Join(abs, p)
	}
	v := r.values[p]
	if op == opEqual {
		return v, nil
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
	default:
		num, ok := patternNumber(v)
		if !ok {
			return "", fmt.Errorf("incorrect expression: operator %s does not match with value %v", op, v)
		}
		if i, ok := num.(int64); ok {
			s = strconv.FormatInt(i, 10) // Kyverno's "%d"
		} else {
			s = strconv.FormatFloat(num.(float64), 'f', 6, 64) // Kyverno's "%f"
		}
	}
	return op.String() + s, nil
}

// hasReferences reports whether a $( appears in any key or string.
func hasReferences(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.Contains(t, "$(")
	case map[string]any:
		for k, e := range t {
			if strings.Contains(k, "$(") || hasReferences(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasReferences(e) {
				return true
			}
		}
	}
	return false
}
