package variables

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
)

var (
	// reReference is Kyverno's RegexReferences: $(...) at the start or after
	// a character other than a backslash, up to the last ")" before a space.
	reReference = regexp.MustCompile(`^\$\(.[^\ ]*\)|[^\\]\$\(.[^\ ]*\)`)
	// reEscapedReference is Kyverno's RegexEscpReferences: \$(...).
	reEscapedReference = regexp.MustCompile(`\\\$\(.[^\ \)]*\)`)
	// reAnchor is Kyverno's anchor syntax: (key), =(key), ^(key), ...
	reAnchor     = regexp.MustCompile(`^([+<=X^])?\((.+)\)$`)
	reInRange    = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
	reNotInRange = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
)

// references resolves $( ) references of one document, as Kyverno's
// substituteReferences does before variables are substituted: each one is a
// path, relative to the string holding it or absolute from the document
// root, to a string elsewhere in the document, optionally behind an operator
// of validate patterns ($(<=./../max)).
type references struct {
	doc   any
	base  string
	index map[string]any // Kyverno path without anchors -> leaf or key
	errs  engine.Errors
}

// resolveReferences returns doc with its references substituted and \$( )
// unescaped; doc itself is left as it is.
func resolveReferences(doc any, base string) (any, engine.Errors) {
	if !hasReference(doc) {
		return doc, nil
	}
	rs := &references{doc: doc, base: base}
	out, _ := rs.walk(doc, base, "")
	return out, rs.errs
}

// hasReference reports whether a string or key anywhere in v holds a
// $(...) reference.
func hasReference(v any) bool { return contains(v, "$(") }

func (rs *references) walk(v any, ptr, field string) (any, bool) {
	switch x := v.(type) {
	case string:
		s := rs.substitute(x, ptr, field)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for _, k := range slices.Sorted(maps.Keys(x)) {
			newKey := rs.substitute(k, ptr, field+fieldKey(k))
			val, changed := rs.walk(x[k], ptr+"/"+escapeKey(k), field+fieldKey(k))
			if newKey == k && !changed {
				continue
			}
			out = rekey(out, x, k, newKey, val)
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		out, changed, _ := mapList(x, func(i int, item any) (any, bool, error) {
			val, changed := rs.walk(item, ptr+"/"+strconv.Itoa(i), field+"["+strconv.Itoa(i)+"]")
			return val, changed, nil
		})
		return out, changed
	}
	return v, false
}

// substitute is Kyverno's substituteReferencesIfAny for one string or key at
// ptr (for a key, the path of its map).
func (rs *references) substitute(value, ptr, field string) string {
	if !strings.Contains(value, "$(") {
		return value
	}
	for _, ref := range reReference.FindAllString(value, -1) {
		old := ref
		prefix := ""
		if ref[:2] != "$(" {
			prefix, ref = ref[:1], ref[1:]
		}
		resolved, err := rs.resolve(ref, ptr)
		if err != nil {
			rs.errorf(field, "reference %s at path %s: %v", ref, ptr, err)
			return value
		}
		s, ok := resolved.(string)
		switch {
		case resolved == nil:
			rs.errorf(field, "reference %s at path %s does not resolve", ref, ptr)
			return value
		case !ok:
			rs.errorf(field, "reference %s at path %s resolves to %T, not a string", ref, ptr, resolved)
			return value
		}
		value = strings.Replace(value, old, prefix+s, 1)
	}
	for _, esc := range reEscapedReference.FindAllString(value, -1) {
		value = strings.ReplaceAll(value, esc, esc[1:])
	}
	return value
}

func (rs *references) errorf(field, format string, args ...any) {
	rs.errs = append(rs.errs, &engine.Error{
		Code:    engine.CodeInvalidVariable,
		Path:    field,
		Message: fmt.Sprintf(format, args...),
	})
}

// resolve is Kyverno's resolveReference.
func (rs *references) resolve(ref, ptr string) (any, error) {
	p := strings.Trim(ref, "$()")
	op := referenceOperator(p)
	p = p[len(op):]
	if p == "" {
		return nil, errors.New("expected path, found empty reference")
	}
	if !path.IsAbs(p) {
		p = path.Join(ptr, p)
	}
	if rs.index == nil {
		rs.index = map[string]any{}
		rs.indexValue(rs.doc, rs.base)
	}
	val := rs.index[p]
	if op == "" {
		return val, nil
	}
	var s string
	switch x := val.(type) {
	case string:
		s = x
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = fmt.Sprintf("%f", x)
	default:
		return nil, fmt.Errorf("incorrect expression: operator %s does not match with value %v", op, val)
	}
	return op + s, nil
}

// indexValue records every leaf and key of the document under its path
// without anchors; for a key, the path of its map. Where two share a path
// the last one in a walk with sorted keys wins (Kyverno: map order).
func (rs *references) indexValue(v any, ptr string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			rs.index[removeAnchors(ptr)] = k
			rs.indexValue(x[k], ptr+"/"+escapeKey(k))
		}
	case []any:
		for i, item := range x {
			rs.indexValue(item, ptr+"/"+strconv.Itoa(i))
		}
	default:
		rs.index[removeAnchors(ptr)] = v
	}
}

// removeAnchors is Kyverno's anchor.RemoveAnchorsFromPath.
func removeAnchors(p string) string {
	parts := strings.Split(p, "/")
	if parts[0] == "" {
		parts = parts[1:]
	}
	for i, part := range parts {
		if m := reAnchor.FindStringSubmatch(strings.TrimSpace(part)); m != nil {
			parts[i] = m[2]
		}
	}
	out := path.Join(parts...)
	if path.IsAbs(p) {
		out = "/" + out
	}
	return out
}

// referenceOperator is Kyverno's operator.GetOperatorFromStringPattern.
func referenceOperator(p string) string {
	if len(p) < 2 {
		return ""
	}
	for _, op := range []string{">=", "<=", ">", "<", "!"} {
		if strings.HasPrefix(p, op) {
			return op
		}
	}
	if reNotInRange.MatchString(p) {
		return "!-"
	}
	if reInRange.MatchString(p) {
		return "-"
	}
	return ""
}
