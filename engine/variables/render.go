package variables

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

// renderer holds the state of one Render.
type renderer struct {
	env      Env
	resolved int // variables resolved
	work     int // bytes of strings built
	scanned  int // bytes searched for variables (maxScan)
	// mock is the compile-time check: every variable resolves to null, {{@}}
	// reads request.object, and variables of later passes are recorded.
	mock   bool
	nested []Var
}

// template renders a parsed string and walks a map or list it yields.
func (r *renderer) template(t *Template, depth int) (any, error) {
	if len(t.vars) == 0 {
		return t.staticV, nil
	}
	out, whole, err := r.renderString(t)
	if err != nil || !whole {
		return out, err
	}
	// Kyverno walks a map or list the variable returned for more variables;
	// a string it returns as it is.
	switch out.(type) {
	case map[string]any, []any, []map[string]any:
		out, _, err = r.value(out, t.path, depth+1)
	}
	return out, err
}

// renderString is Kyverno's substituteVariablesIfAny for one string: passes
// of substitution until no variable is left (or the last variable of a pass
// was shallow), then \{{ unescaped. whole reports that the string was
// exactly one variable and out is that variable's value, which Kyverno
// returns as it is.
func (r *renderer) renderString(t *Template) (out any, whole bool, err error) {
	value := t.src
	vars := t.vars
	for pass := 0; len(vars) > 0; pass++ {
		if pass == maxPasses {
			return nil, false, r.errorf(engine.CodeEvaluation, t.path,
				"variable substitution at path %s does not end after %d passes", t.path, maxPasses)
		}
		original := value
		shallow := false
		for _, v := range vars {
			shallow = v.shallow
			val, variable, err := r.resolve(v, t.path)
			if err != nil {
				return nil, false, err
			}
			if original == v.text {
				return val, true, nil
			}
			s, err := embed(val, shallow)
			if err != nil {
				return nil, false, &engine.Error{
					Code:    engine.CodeEvaluation,
					Path:    t.path,
					Message: fmt.Sprintf("failed to resolve %s at path %s: %v", jmespath.Excerpt(variable), t.path, err),
					Err:     err,
				}
			}
			// Kyverno replaces the first occurrence of the match, which is not
			// always the one scanned (a value may hold the same text).
			if i := strings.Index(value, v.match); i >= 0 {
				value = value[:i] + v.prefix + s + value[i+len(v.match):]
			}
			r.work += len(value)
			if len(value) > maxLength {
				return nil, false, r.errorf(engine.CodeEvaluation, t.path,
					"variable substitution at path %s makes a string longer than %d bytes", t.path, maxLength)
			}
			if r.work > maxWork {
				return nil, false, r.errorf(engine.CodeEvaluation, t.path,
					"variable substitution builds more than %d bytes of strings", maxWork)
			}
		}
		if shallow {
			break
		}
		r.work += len(value)
		if err := r.scan(len(value), t.path); err != nil {
			return nil, false, err
		}
		vars = scan(value)
	}
	return strings.ReplaceAll(value, `\{{`, "{{"), false, nil
}

// embed is the text of a value inside a string: strings as they are, other
// values as JSON. A shallow variable's {{ are escaped so that they survive.
func embed(val any, shallow bool) (string, error) {
	s, ok := val.(string)
	if !ok {
		b, err := appendJSON(nil, val)
		if err != nil {
			return "", fmt.Errorf("failed to marshal %T: %v", val, val)
		}
		s = string(b)
	}
	// Kyverno escapes only string values (and panics on others); JSON text
	// is escaped here too.
	if shallow && val != nil {
		s = strings.ReplaceAll(s, "{{", `\{{`)
	}
	return s, nil
}

// resolve queries one variable. variable is the expression as queried, after
// the {{@}} and DELETE rewrites; it names the variable in errors.
func (r *renderer) resolve(v *variable, path string) (val any, variable string, err error) {
	r.resolved++
	if r.resolved > maxResolutions {
		return nil, v.expr, r.errorf(engine.CodeEvaluation, path,
			"variable substitution resolves more than %d variables", maxResolutions)
	}
	q := v.q
	if v.expr == "@" {
		cur := v.cur
		if cur == nil {
			if cur, err = compileCurrent(path); err != nil {
				return nil, v.expr, r.unresolved(v.expr, path, err)
			}
		}
		q = cur.object
		if !r.mock {
			if _, err := r.env.Resolve(cur.probe); err == nil {
				q = cur.target
			}
		}
	}
	var jq *jmespath.Query
	if q != nil {
		variable, jq = q.text, q.q
		if r.env.Delete && q.delText != "" {
			variable, jq, err = q.delText, q.del, q.delErr
		}
	} else {
		variable = v.expr
		if r.env.Delete {
			variable = strings.ReplaceAll(variable, "request.object", "request.oldObject")
		}
		jq, err = parseQuery(variable)
	}
	if err != nil {
		if r.mock {
			return nil, variable, &engine.Error{
				Code:    engine.CodeInvalidVariable,
				Path:    path,
				Message: fmt.Sprintf("nested variable %s: %v", jmespath.Excerpt(v.text), err),
				Err:     err,
			}
		}
		return nil, variable, &engine.Error{
			Code:    engine.CodeInvalidVariable,
			Path:    path,
			Message: fmt.Sprintf("failed to resolve %s at path %s: %v", jmespath.Excerpt(variable), path, err),
			Err:     err,
		}
	}
	if r.mock && v.q == nil && v.cur == nil {
		r.nested = append(r.nested, Var{Path: path, Expr: v.expr, Query: jq, Nested: true})
	}
	val, err = r.env.Resolve(jq)
	if err != nil {
		return nil, variable, r.unresolved(variable, path, err)
	}
	return val, variable, nil
}

// unresolved is Kyverno's "failed to resolve <variable> at path <path>: <err>".
func (r *renderer) unresolved(variable, path string, err error) error {
	return &engine.Error{
		Code:    engine.CodeVariableNotResolved,
		Path:    path,
		Message: fmt.Sprintf("failed to resolve %s at path %s: %v", jmespath.Excerpt(variable), path, err),
		Err:     err,
	}
}

// scan counts n bytes about to be searched for variables against maxScan.
func (r *renderer) scan(n int, path string) error {
	r.scanned += n
	if r.scanned > maxScan {
		return r.errorf(engine.CodeEvaluation, path,
			"variable substitution at path %s searches more than %d bytes for variables", path, maxScan)
	}
	return nil
}

func (r *renderer) errorf(code engine.Code, path, format string, args ...any) error {
	return &engine.Error{Code: code, Path: path, Message: fmt.Sprintf(format, args...)}
}

// value walks a value a whole-string variable returned, substituting
// variables in its strings and keys as Kyverno's traversal does. It copies
// only what changes; changed reports whether anything did.
func (r *renderer) value(v any, path string, depth int) (out any, changed bool, err error) {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, "{{") {
			return v, false, nil // v, not x: x would be boxed again
		}
		if depth > maxDepth {
			return nil, false, r.errorf(engine.CodeEvaluation, path,
				"variable substitution at path %s nests deeper than %d values", path, maxDepth)
		}
		if err := r.scan(len(x), path); err != nil {
			return nil, false, err
		}
		out, err := r.template(dynamicTemplate(x, path), depth)
		if err != nil {
			return nil, false, err
		}
		if s, ok := out.(string); ok && s == x {
			return out, false, nil // x, already boxed
		}
		return out, true, nil
	case map[string]any:
		if !hasBraces(x) {
			return x, false, nil
		}
		return r.object(x, path, depth)
	case []any:
		if !hasBraces(x) {
			return v, false, nil
		}
		return r.list(x, path, depth)
	case []map[string]any:
		if !hasBraces(x) {
			return v, false, nil
		}
		list := make([]any, len(x))
		for i, m := range x {
			list[i] = m
		}
		out, _, err := r.list(list, path, depth)
		return out, true, err
	}
	return v, false, nil
}

func (r *renderer) object(m map[string]any, path string, depth int) (any, bool, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out map[string]any
	for _, k := range keys {
		newKey, err := r.key(k, path, depth)
		if err != nil {
			return nil, false, err
		}
		val, changed, err := r.value(m[k], path+"/"+escapeKey(k), depth)
		if err != nil {
			return nil, false, err
		}
		if newKey == k && !changed {
			continue
		}
		out = rekey(out, m, k, newKey, val)
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

func (r *renderer) list(l []any, path string, depth int) (any, bool, error) {
	out, changed, err := mapList(l, func(i int, item any) (any, bool, error) {
		return r.value(item, path+"/"+itoa(i), depth)
	})
	if err != nil {
		return nil, false, err
	}
	return out, changed, nil
}

// rekey sets val at newKey in out, a copy of m made on the first change,
// and drops k when the key changed; it returns out.
func rekey(out, m map[string]any, k, newKey string, val any) map[string]any {
	if out == nil {
		out = maps.Clone(m)
	}
	if newKey != k {
		delete(out, k)
	}
	out[newKey] = val
	return out
}

// mapList is l with each item replaced by what f returns for it, copied
// on the first change (changed reports one); l itself is never changed.
// The first error of f is returned.
func mapList(l []any, f func(i int, item any) (any, bool, error)) (out []any, changed bool, err error) {
	for i, item := range l {
		val, ch, err := f(i, item)
		if err != nil {
			return nil, false, err
		}
		if !ch {
			continue
		}
		if out == nil {
			out = slices.Clone(l)
		}
		out[i] = val
	}
	if out == nil {
		return l, false, nil
	}
	return out, true, nil
}

// key substitutes the variables of a map key found at path (the path of the
// map). A key must stay a string; a key that is one variable resolving to
// null is kept as it is.
func (r *renderer) key(k, path string, depth int) (string, error) {
	if !strings.Contains(k, "{{") {
		return k, nil
	}
	if err := r.scan(len(k), path); err != nil {
		return "", err
	}
	return r.keyTemplate(dynamicTemplate(k, path), depth)
}

func (r *renderer) keyTemplate(t *Template, depth int) (string, error) {
	out, err := r.template(t, depth)
	if err != nil {
		return "", err
	}
	switch x := out.(type) {
	case nil:
		return t.src, nil
	case string:
		return x, nil
	}
	return "", &engine.Error{
		Code:    engine.CodeEvaluation,
		Path:    t.path,
		Message: fmt.Sprintf("expected string after substituting variables in key %q", jmespath.Excerpt(t.src)),
	}
}

// dynamicTemplate is a string met while rendering: its variables are parsed
// when resolved.
func dynamicTemplate(s, path string) *Template {
	t := &Template{src: s, path: path, vars: scan(s)}
	if len(t.vars) == 0 {
		t.setStatic(strings.ReplaceAll(s, `\{{`, "{{"))
	}
	return t
}

// hasBraces reports whether a string or key anywhere in v contains "{{".
func hasBraces(v any) bool { return contains(v, "{{") }

// contains reports whether a string or key anywhere in v contains sub.
func contains(v any, sub string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, sub)
	case map[string]any:
		for k, v := range x {
			if strings.Contains(k, sub) || contains(v, sub) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if contains(v, sub) {
				return true
			}
		}
	case []map[string]any:
		for _, v := range x {
			if contains(v, sub) {
				return true
			}
		}
	}
	return false
}

// escapeKey is how Kyverno writes a key in a path.
func escapeKey(k string) string {
	if !strings.Contains(k, "/") {
		return k
	}
	return strings.ReplaceAll(k, "/", `\/`)
}
