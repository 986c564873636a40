package variables

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

// Document is a JSON value (maps, lists, scalars) of a policy with templates
// at its string leaves and map keys, parsed once. It is immutable and safe
// for concurrent use.
type Document struct {
	root *node
	vars []Var
}

// node is a compiled part of a document. A static node renders to a fixed
// value; a dynamic one holds a template or dynamic children.
type node struct {
	dynamic bool
	static  any
	tmpl    *Template // a string with variables
	// a map: the static entries, rendered, and the dynamic ones by key
	base    map[string]any
	entries []entry
	// a list
	items []*node
	list  bool
}

type entry struct {
	newKey string    // the key, rendered, when keyT is nil
	keyT   *Template // a key with variables
	val    *node
}

// ParseDocument parses every string of doc, map keys included, the way
// Kyverno's SubstituteAll walks a document: $( ) references to other fields
// of doc are resolved first (they depend on the policy only, so this happens
// here), then each {{ }} variable is parsed. Paths in render errors and the
// value of {{@}} derive from the place of each string inside doc.
//
// Errors are engine.Errors with Code engine.CodeInvalidVariable and a Path
// relative to doc in dotted form (".spec.containers[0].image", "" for the
// root), to append to the document's own path in the policy.
//
// A doc that is not made of map[string]any, []any and scalars (a struct, a
// typed map) is first converted through JSON, as Kyverno's DocumentToUntyped.
func ParseDocument(doc any) (*Document, error) {
	return ParseDocumentAt(doc, "")
}

// ParseDocumentAt is ParseDocument for a doc that sits at base in the value
// Kyverno substitutes, so that render errors and {{@}} see Kyverno's paths.
// For example, a mutate rule's patchStrategicMerge is substituted as part of
// the rule: base "/mutate/patchStrategicMerge" makes {{@}} read
// request.object.<path inside the patch>. base is "" or starts with "/".
func ParseDocumentAt(doc any, base string) (*Document, error) {
	doc, err := untyped(doc)
	if err != nil {
		return nil, err
	}
	doc, errs := resolveReferences(doc, base)
	c := &compiler{errs: errs}
	root, _ := c.compile(doc, base, "")
	if len(c.errs) > 0 {
		return nil, c.errs.Err()
	}
	return &Document{root: root, vars: c.vars}, nil
}

// untyped is Kyverno's DocumentToUntyped.
func untyped(doc any) (any, error) {
	switch doc.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, json.Number, []any, map[string]any:
		return doc, nil
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeDecode, Message: fmt.Sprintf("document is not JSON: %v", err), Err: err}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, &engine.Error{Code: engine.CodeDecode, Message: fmt.Sprintf("document is not JSON: %v", err), Err: err}
	}
	return out, nil
}

type compiler struct {
	errs engine.Errors
	vars []Var
}

// compile compiles v found at the Kyverno path ptr and the dotted path field.
// changed reports that a static result differs from v (an unescaped \{{, a
// resolved reference), so that v itself can be kept otherwise.
func (c *compiler) compile(v any, ptr, field string) (n *node, changed bool) {
	switch x := v.(type) {
	case string:
		t := c.template(x, ptr, field)
		switch {
		case t == nil:
			return &node{static: x}, false
		case len(t.vars) == 0:
			return &node{static: t.static}, t.static != x
		}
		return &node{dynamic: true, tmpl: t}, true
	case map[string]any:
		return c.object(x, ptr, field)
	case []any:
		n := &node{list: true, items: make([]*node, len(x))}
		for i, item := range x {
			var ch bool
			n.items[i], ch = c.compile(item, ptr+"/"+strconv.Itoa(i), field+"["+strconv.Itoa(i)+"]")
			n.dynamic = n.dynamic || n.items[i].dynamic
			changed = changed || ch
		}
		switch {
		case n.dynamic:
			return n, true
		case !changed:
			return &node{static: x}, false
		}
		out := make([]any, len(x))
		for i, item := range n.items {
			out[i] = item.static
		}
		return &node{static: out}, true
	}
	return &node{static: v}, false
}

func (c *compiler) object(m map[string]any, ptr, field string) (*node, bool) {
	n := &node{base: make(map[string]any, len(m))}
	changed := false
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e := entry{newKey: k}
		if t := c.template(k, ptr, field+fieldKey(k)); t != nil {
			if len(t.vars) > 0 {
				e.keyT = t
			} else {
				e.newKey = t.static
			}
		}
		var ch bool
		e.val, ch = c.compile(m[k], ptr+"/"+escapeKey(k), field+fieldKey(k))
		if e.keyT == nil && !e.val.dynamic {
			n.base[e.newKey] = e.val.static
			changed = changed || ch || e.newKey != k
			continue
		}
		n.dynamic = true
		n.entries = append(n.entries, e)
	}
	switch {
	case n.dynamic:
		return n, true
	case !changed:
		return &node{static: m}, false
	}
	return &node{static: n.base}, true
}

// template parses one string or key; nil if it has no braces or does not
// parse (the error is recorded).
func (c *compiler) template(s, ptr, field string) *Template {
	if !strings.Contains(s, "{{") {
		return nil
	}
	t, errs := parseTemplate(s, ptr, field)
	if len(errs) > 0 {
		c.errs = append(c.errs, errs...)
		return nil
	}
	c.vars = append(c.vars, t.Vars()...)
	return t
}

// fieldKey is a map key in the dotted form of compile error paths.
func fieldKey(k string) string {
	if k != "" && !(k[0] >= '0' && k[0] <= '9') && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
	}) == -1 {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

// HasVariables reports whether any string or key of the document holds a
// {{ }} variable. A document without variables renders to the same value
// every time.
func (d *Document) HasVariables() bool { return d.root.dynamic }

// Vars returns every variable of the document: for each string, those
// written in it, then the nested ones as Kyverno's validation sees them.
func (d *Document) Vars() []Var { return slices.Clone(d.vars) }

// Queries returns the parsed expression of every variable of the document,
// nested ones included (see Var.Query), for compile-time checks.
func (d *Document) Queries() []*jmespath.Query {
	out := make([]*jmespath.Query, 0, len(d.vars))
	for _, v := range d.vars {
		if v.Query != nil {
			out = append(out, v.Query)
		}
	}
	return out
}

// Render substitutes the variables of the document and returns the result,
// a new value that shares the parts without variables with the parsed
// document (and with the original doc when compiling changed nothing in
// them): treat it as read-only. The input of ParseDocument is never
// modified. A document without variables renders without allocating.
//
// The first error stops rendering, in the order of a walk with map keys
// sorted, each key before its value.
func (d *Document) Render(env Env) (any, error) {
	if !d.root.dynamic {
		return d.root.static, nil
	}
	r := &renderer{env: env}
	return r.node(d.root)
}

func (r *renderer) node(n *node) (any, error) {
	switch {
	case !n.dynamic:
		return n.static, nil
	case n.tmpl != nil:
		return r.template(n.tmpl, 0)
	case n.list:
		out := make([]any, len(n.items))
		for i, item := range n.items {
			v, err := r.node(item)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	out := make(map[string]any, len(n.base)+len(n.entries))
	maps.Copy(out, n.base)
	// A key that renders to the same text as another one takes its place;
	// in Kyverno the winner depends on map iteration order.
	for _, e := range n.entries {
		k := e.newKey
		if e.keyT != nil {
			var err error
			if k, err = r.keyTemplate(e.keyT, 0); err != nil {
				return nil, err
			}
		}
		v, err := r.node(e.val)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// StaticAt returns the value the document renders to at path (a key of
// each nested object, from the root) when it does not depend on variables:
// ok is false when the value holds a variable or when an object on the way
// has a key with a variable (which could render to the key looked for). A
// path the document does not have is nil, true; one that goes through a
// value that is not an object is nil, true too, as rendering gives no value
// there.
func (d *Document) StaticAt(path ...string) (v any, ok bool) {
	n := d.root
	for i, k := range path {
		if !n.dynamic {
			return staticAt(n.static, path[i:]), true
		}
		if n.tmpl != nil || n.list {
			return nil, false
		}
		next := (*node)(nil)
		for _, e := range n.entries {
			switch {
			case e.keyT != nil:
				return nil, false
			case e.newKey == k:
				next = e.val
			}
		}
		if next == nil {
			return staticAt(n.base, path[i:]), true
		}
		n = next
	}
	if n.dynamic {
		return nil, false
	}
	return n.static, true
}

// staticAt is the value at path in a static value.
func staticAt(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
