package mutate

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// node is one value of a document being merged, shaped like the YAML node
// Kyverno's strategic merge works on (it runs kustomize's kyaml over the
// JSON text of the resource and of the patch): maps keep their keys in
// order (sorted, as JSON encoding writes them), and scalars are compared by
// their text ("8080" for the number 8080 and for the string "8080").
//
// A nil *node is a missing value; a null scalar is a present one.
type node struct {
	kind nodeKind
	// scalars
	text string
	val  any  // the typed value: string, float64, bool or nil
	null bool // tagged null
	keep bool // a null to keep in the output (kyaml's persistent null)
	// quoted is the double-quoted style of a JSON string. A scalar that
	// replaces another in a map takes its style, so a number written over
	// a string comes out as a string (YAML drops the number's tag there).
	quoted bool
	// maps
	keys []string
	vals []*node
	// lists
	items []*node
	// raw is the value of a map or list of the resource that was not
	// looked into yet (lazy); expand converts one level of it. A lazy node
	// the merge does not change is returned as raw, without copying. Once
	// expanded, raw is the value the node came from: value returns it when
	// the node still holds exactly that.
	raw  any
	lazy bool
}

type nodeKind uint8

const (
	scalarNode nodeKind = iota + 1
	mapNode
	listNode
)

func (k nodeKind) String() string {
	switch k {
	case scalarNode:
		return "ScalarNode"
	case mapNode:
		return "MappingNode"
	case listNode:
		return "SequenceNode"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// toNode converts a JSON-decoded value into a node tree. Map keys are
// sorted, as encoding/json writes them.
func toNode(v any) (*node, error) {
	switch t := v.(type) {
	case map[string]any:
		n := &node{kind: mapNode, keys: make([]string, 0, len(t)), vals: make([]*node, 0, len(t))}
		for k := range t {
			n.keys = append(n.keys, k)
		}
		slices.Sort(n.keys)
		for _, k := range n.keys {
			c, err := toNode(t[k])
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, c)
		}
		return n, nil
	case []any:
		return listToNode(t)
	case []map[string]any:
		return listToNode(t)
	case nil, string, bool:
		n, _ := scalarOf(v)
		return &n, nil
	case float64:
		return numberNode(t)
	case float32:
		return numberNode(float64(t))
	case int:
		return numberNode(float64(t))
	case int32:
		return numberNode(float64(t))
	case int64:
		return &node{kind: scalarNode, text: strconv.FormatInt(t, 10), val: float64(t)}, nil
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		return &node{kind: scalarNode, text: t.String(), val: f}, nil
	}
	return nil, fmt.Errorf("value of type %T is not JSON", v)
}

// scalarOf is toNode of the scalars decoded JSON holds most (a string, a
// bool, a finite float64 or nil), as a value; false for anything else.
func scalarOf(v any) (node, bool) {
	switch t := v.(type) {
	case nil:
		return node{kind: scalarNode, text: "null", null: true}, true
	case string:
		return node{kind: scalarNode, text: t, val: t, quoted: true}, true
	case bool:
		return node{kind: scalarNode, text: strconv.FormatBool(t), val: t}, true
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return node{}, false
		}
		return node{kind: scalarNode, text: formatNumber(t), val: t}, true
	}
	return node{}, false
}

// setLazy makes n lazyNode(v), in place.
func (n *node) setLazy(v any) {
	switch t := v.(type) {
	case map[string]any:
		*n = node{kind: mapNode, raw: t, lazy: true}
		return
	case []any:
		*n = node{kind: listNode, raw: t, lazy: true}
		return
	}
	if c, ok := scalarOf(v); ok {
		*n = c
		return
	}
	*n = *lazyNode(v)
}

// lazyNode wraps a value of the resource: maps and lists are converted one
// level at a time, when the merge looks into them.
func lazyNode(v any) *node {
	switch t := v.(type) {
	case map[string]any:
		return &node{kind: mapNode, raw: t, lazy: true}
	case []any:
		return &node{kind: listNode, raw: t, lazy: true}
	}
	n, err := toNode(v)
	if err != nil {
		// Not JSON: keep it as an opaque string scalar.
		return &node{kind: scalarNode, text: fmt.Sprint(v), val: v}
	}
	return n
}

// expand converts one level of a lazy node; the nodes of that level are
// allocated at once.
func (n *node) expand() {
	if n == nil || !n.lazy {
		return
	}
	n.lazy = false
	switch t := n.raw.(type) {
	case map[string]any:
		n.keys = make([]string, 0, len(t))
		for k := range t {
			n.keys = append(n.keys, k)
		}
		slices.Sort(n.keys)
		n.vals = make([]*node, len(n.keys))
		children := make([]node, len(n.keys))
		for i, k := range n.keys {
			children[i].setLazy(t[k])
			n.vals[i] = &children[i]
		}
	case []any:
		n.items = make([]*node, len(t))
		children := make([]node, len(t))
		for i, item := range t {
			children[i].setLazy(item)
			n.items[i] = &children[i]
		}
	}
}

func numberNode(f float64) (*node, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %v is not JSON", f)
	}
	return &node{kind: scalarNode, text: formatNumber(f), val: f}, nil
}

// formatNumber writes f as encoding/json does.
func formatNumber(f float64) string {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

// plainScalar is a scalar written without quotes (kyaml's NewScalarRNode):
// its type is the one YAML resolves from the text.
func plainScalar(text string) *node {
	n := &node{kind: scalarNode, text: text}
	switch strings.ToLower(text) {
	case "", "~", "null":
		n.null = true
		return n
	case "true":
		n.val = true
		return n
	case "false":
		n.val = false
		return n
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && looksNumeric(text) {
		n.val = f
		return n
	}
	n.val = text
	return n
}

func looksNumeric(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r == '-' || r == '+' || r == '.' || r == 'e' || r == 'E') {
			return false
		}
	}
	return true
}

// value converts a node tree back into a JSON value. Two equal keys in one
// map are an error, as decoding the YAML Kyverno writes would be.
func (n *node) value() (any, error) {
	if n == nil {
		return nil, nil
	}
	if n.lazy {
		return n.raw, nil
	}
	switch n.kind {
	case mapNode:
		return n.mapValue()
	case listNode:
		return n.listValue()
	}
	if n.null {
		return nil, nil
	}
	if _, ok := n.val.(string); !ok && n.quoted {
		return n.text, nil
	}
	return n.val, nil
}

// mapValue is the value of a map node. When the node was expanded from a
// map of the resource and still holds the same keys with identical values,
// that map is the value (it is equal to the one built); otherwise a map is
// built.
func (n *node) mapValue() (any, error) {
	src, _ := n.raw.(map[string]any)
	var m map[string]any
	if src == nil || len(src) != len(n.keys) {
		m = make(map[string]any, len(n.keys))
	}
	for i, k := range n.keys {
		// While the keys are sorted, none repeats, so src need not be
		// copied to find out.
		if m == nil && i > 0 && n.keys[i-1] >= k {
			m = prefixCopy(src, n.keys[:i])
		}
		if m != nil {
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("mapping key %q already defined", k)
			}
		}
		v, err := n.vals[i].value()
		if err != nil {
			return nil, err
		}
		if m == nil {
			if sv, ok := src[k]; ok && identical(v, sv) {
				continue
			}
			m = prefixCopy(src, n.keys[:i])
		}
		m[k] = v
	}
	if m == nil {
		return src, nil
	}
	return m, nil
}

// prefixCopy is a new map with the values of keys in src.
func prefixCopy(src map[string]any, keys []string) map[string]any {
	m := make(map[string]any, len(src))
	for _, k := range keys {
		m[k] = src[k]
	}
	return m
}

// listValue is the value of a list node: like mapValue, the list of the
// resource it was expanded from when its items are still identical.
func (n *node) listValue() (any, error) {
	src, _ := n.raw.([]any)
	var l []any
	if src == nil || len(src) != len(n.items) {
		l = make([]any, len(n.items))
	}
	for i, item := range n.items {
		v, err := item.value()
		if err != nil {
			return nil, err
		}
		if l == nil {
			if identical(v, src[i]) {
				continue
			}
			l = make([]any, len(n.items))
			copy(l, src[:i])
		}
		l[i] = v
	}
	if l == nil {
		return src, nil
	}
	return l, nil
}

// identical reports whether a and b are the same JSON value by identity:
// the same map or list, or equal scalars of the same Go type (a float64
// to the bit). One can stand for the other in a result.
func identical(a, b any) bool {
	switch at := a.(type) {
	case map[string]any:
		bt, ok := b.(map[string]any)
		return ok && at != nil && bt != nil && reflect.ValueOf(at).UnsafePointer() == reflect.ValueOf(bt).UnsafePointer()
	case []any:
		bt, ok := b.([]any)
		return ok && len(at) == len(bt) && unsafe.SliceData(at) == unsafe.SliceData(bt)
	case string:
		bt, ok := b.(string)
		return ok && at == bt
	case float64:
		bt, ok := b.(float64)
		return ok && math.Float64bits(at) == math.Float64bits(bt)
	case bool:
		bt, ok := b.(bool)
		return ok && at == bt
	case nil:
		return b == nil
	}
	return false
}

// arenaSize counts what a copy of a node tree holds: nodes, map keys and
// values, list items.
type arenaSize struct{ nodes, keys, items int }

func (n *node) arenaSize() arenaSize {
	var sz arenaSize
	n.countIn(&sz)
	return sz
}

func (n *node) countIn(sz *arenaSize) {
	if n == nil {
		return
	}
	sz.nodes++
	sz.keys += len(n.keys)
	sz.items += len(n.items)
	for _, v := range n.vals {
		v.countIn(sz)
	}
	for _, v := range n.items {
		v.countIn(sz)
	}
}

// arena is the memory of a node tree's copy, allocated at once.
type arena struct {
	nodes []node
	keys  []string
	vals  []*node
	items []*node
}

func newArena(sz arenaSize) *arena {
	return &arena{
		nodes: make([]node, sz.nodes),
		keys:  make([]string, sz.keys),
		vals:  make([]*node, sz.keys),
		items: make([]*node, sz.items),
	}
}

// cloneIn is copy for a tree without lazy nodes (a converted patch), in
// memory taken from a, which arenaSize of n sized. Each slice of the copy
// is capped at its length, so appending to it does not reach a
// neighbour's.
func (n *node) cloneIn(a *arena) *node {
	if n == nil {
		return nil
	}
	c := &a.nodes[0]
	a.nodes = a.nodes[1:]
	*c = *n
	if n.keys != nil {
		k := len(n.keys)
		c.keys = a.keys[:k:k]
		c.vals = a.vals[:k:k]
		a.keys, a.vals = a.keys[k:], a.vals[k:]
		copy(c.keys, n.keys)
		for i, v := range n.vals {
			c.vals[i] = v.cloneIn(a)
		}
	}
	if n.items != nil {
		k := len(n.items)
		c.items = a.items[:k:k]
		a.items = a.items[k:]
		for i, v := range n.items {
			c.items[i] = v.cloneIn(a)
		}
	}
	return c
}

// copy returns a deep copy of n.
func (n *node) copy() *node {
	if n == nil {
		return nil
	}
	n.expand()
	c := *n
	if n.keys != nil {
		c.keys = slices.Clone(n.keys)
		c.vals = make([]*node, len(n.vals))
		for i, v := range n.vals {
			c.vals[i] = v.copy()
		}
	}
	if n.items != nil {
		c.items = make([]*node, len(n.items))
		for i, v := range n.items {
			c.items[i] = v.copy()
		}
	}
	return &c
}

// missingOrNull is kyaml's IsMissingOrNull.
func missingOrNull(n *node) bool { return n == nil || n.null }

// emptyMap is kyaml's IsEmptyMap.
func emptyMap(n *node) bool { return missingOrNull(n) || n.kind == mapNode && n.size() == 0 }

// size is the number of keys of a map or items of a list.
func (n *node) size() int {
	if n.lazy {
		switch t := n.raw.(type) {
		case map[string]any:
			return len(t)
		case []any:
			return len(t)
		}
		return 0
	}
	if n.kind == mapNode {
		return len(n.keys)
	}
	return len(n.items)
}

// nilOrEmpty is kyaml's IsNilOrEmpty: missing, null, or an empty map or
// list.
func nilOrEmpty(n *node) bool {
	return n == nil || n.null || (n.kind == mapNode || n.kind == listNode) && n.size() == 0
}

// scalarText is kyaml's GetValue: the text of a scalar, "" for anything
// else or a missing or null value.
func scalarText(n *node) string {
	if missingOrNull(n) {
		return ""
	}
	return n.text
}

// nodeText is the Value of a YAML node: the text of a scalar, "" for a map
// or a list.
func nodeText(n *node) string {
	if n == nil || n.kind != scalarNode {
		return ""
	}
	return n.text
}

// field returns the value of the first key k of a map (nil if absent or
// n is not a map).
func (n *node) field(k string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	n.expand()
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

// hasField reports whether a map has key k.
func (n *node) hasField(k string) bool {
	if n == nil || n.kind != mapNode {
		return false
	}
	if n.lazy {
		m, _ := n.raw.(map[string]any)
		_, ok := m[k]
		return ok
	}
	return slices.Contains(n.keys, k)
}

// peek is field for reading only: the value of key k of a map, without
// expanding a lazy map (a new lazy node then, not part of n's tree).
func (n *node) peek(k string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	if !n.lazy {
		return n.field(k)
	}
	m, _ := n.raw.(map[string]any)
	v, ok := m[k]
	if !ok {
		return nil
	}
	return lazyNode(v)
}

// peekItems is the items of a list for reading only, without expanding a
// lazy list (new lazy nodes then).
func (n *node) peekItems() []*node {
	if !n.lazy {
		n.expand()
		return n.items
	}
	raw, _ := n.raw.([]any)
	items := make([]*node, len(raw))
	for i, item := range raw {
		items[i] = lazyNode(item)
	}
	return items
}

// clearField removes the first key k of a map.
func (n *node) clearField(k string) {
	if n == nil || n.kind != mapNode {
		return
	}
	n.expand()
	for i, key := range n.keys {
		if key == k {
			n.keys = slices.Delete(n.keys, i, i+1)
			n.vals = slices.Delete(n.vals, i, i+1)
			return
		}
	}
}

// setField is kyaml's FieldSetter: a missing value or a null (not kept)
// clears the field; otherwise it replaces the first key k, or appends it.
func (n *node) setField(k string, v *node) {
	n.expand()
	if v == nil || v.null && !v.keep {
		n.clearField(k)
		return
	}
	for i, key := range n.keys {
		if key == k {
			if old := n.vals[i]; old != v && old != nil && old.kind == scalarNode && v.kind == scalarNode && old.quoted != v.quoted {
				c := *v
				c.quoted = old.quoted
				v = &c
			}
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
}

// renameField renames the first key name of a map.
func (n *node) renameField(name, newName string) {
	if n == nil || n.kind != mapNode {
		return
	}
	n.expand()
	for i, key := range n.keys {
		if key == name {
			n.keys[i] = newName
			return
		}
	}
}

// describe writes a node as YAML in flow style, the way Kyverno's errors
// show the nodes it parsed from JSON.
func (n *node) describe() string {
	var b strings.Builder
	n.flow(&b)
	return b.String()
}

func (n *node) flow(b *strings.Builder) {
	if n == nil {
		b.WriteString("null")
		return
	}
	n.expand()
	switch n.kind {
	case mapNode:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteString(": ")
			n.vals[i].flow(b)
		}
		b.WriteByte('}')
	case listNode:
		b.WriteByte('[')
		for i, item := range n.items {
			if i > 0 {
				b.WriteString(", ")
			}
			item.flow(b)
		}
		b.WriteByte(']')
	default:
		if n.quoted {
			q, _ := json.Marshal(n.text)
			b.Write(q)
			return
		}
		b.WriteString(n.text)
	}
}

// listToNode converts the items of a list.
func listToNode[T any](items []T) (*node, error) {
	n := &node{kind: listNode, items: make([]*node, len(items))}
	for i, item := range items {
		c, err := toNode(item)
		if err != nil {
			return nil, err
		}
		n.items[i] = c
	}
	return n, nil
}
