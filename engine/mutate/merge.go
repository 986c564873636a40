package mutate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file is kustomize's strategic merge (kyaml's merge2 walker, with
// kustomize's patchstrategicmerge options: list items from the patch come
// first), which Kyverno's patchStrategicMerge runs after its anchor
// preprocessing. It works on nodes, in place, as kyaml works on YAML nodes:
// the merged result shares nodes with both inputs, and the quirks of kyaml
// (elements without a merge key, empty elements dropped from merged lists,
// the order of merged list items) are reproduced on purpose. The names
// follow kyaml's.

// smpDirective is a "$patch" directive.
type smpDirective int

const (
	smpUnknown smpDirective = iota
	smpReplace
	smpDelete
	smpMerge
)

const directiveKey = "$patch"

// merge merges patch into dest, as merge2.Merge does. It returns the
// merged node (nil when the patch deletes the whole document).
func merge(patch, dest *node) (*node, error) {
	return walk(dest, patch, nil, nil)
}

// walk is kyaml's Walker.Walk over the sources [dest, origin].
func walk(dest, origin *node, s schema, path []string) (*node, error) {
	if origin == nil && dest != nil && dest.lazy && unchanged(dest.raw, s) {
		// Merging nothing into a part of the resource leaves it as it is
		// (unchanged says when kyaml's walk would not alter it).
		return dest, nil
	}
	if emptyPatchList(origin) && s != nil && s.merge && dest != nil && dest.lazy {
		// An empty list merged by key into a list of the resource adds
		// no element and walks the others as merging nothing does (an
		// anchor that matched no element leaves such a list).
		if _, ok := dest.raw.([]any); ok && unchanged(dest.raw, s) {
			return dest, nil
		}
	}
	s = schemaOf(dest, origin, s)
	var kind nodeKind
	for _, n := range []*node{dest, origin} {
		if !missingOrNull(n) {
			kind = n.kind
			break
		}
	}
	switch kind {
	case mapNode:
		if err := checkKinds(mapNode, dest, origin); err != nil {
			return nil, err
		}
		return walkMap(dest, origin, s, path)
	case listNode:
		if err := checkKinds(listNode, dest, origin); err != nil {
			return nil, err
		}
		if s != nil && s.merge {
			return walkAssociativeList(dest, origin, s, path)
		}
		// A list without a merge strategy is replaced by the patch.
		if origin != nil {
			return origin, nil
		}
		return dest, nil
	case scalarNode:
		if err := checkKinds(scalarNode, dest, origin); err != nil {
			return nil, err
		}
		if origin != nil {
			return origin, nil
		}
		return dest, nil
	}
	return walkMap(dest, origin, s, path)
}

// emptyPatchList: a patch list with no element (hence no $patch
// directive).
func emptyPatchList(n *node) bool {
	return n != nil && !n.null && !n.lazy && n.kind == listNode && len(n.items) == 0
}

// schemaOf is kyaml's Walker.GetSchema: the schema given, or the one of a
// source's apiVersion and kind.
func schemaOf(dest, origin *node, s schema) schema {
	if s != nil {
		return s
	}
	for _, n := range []*node{dest, origin} {
		if missingOrNull(n) || n.kind != mapNode {
			continue
		}
		apiVersion, kind := n.field("apiVersion"), n.field("kind")
		if nilOrEmpty(apiVersion) || nilOrEmpty(kind) {
			continue
		}
		if rs := schemaFor(scalarText(apiVersion), scalarText(kind)); rs != nil {
			return rs
		}
	}
	return nil
}

func checkKinds(kind nodeKind, nodes ...*node) error {
	for _, n := range nodes {
		if missingOrNull(n) || n.kind == kind {
			continue
		}
		return kindError(kind, n)
	}
	return nil
}

func kindError(want nodeKind, n *node) error {
	return fmt.Errorf("wrong node kind: expected %s but got %s: node contents:\n%s", want, n.kind, n.describe())
}

func walkMap(dest, origin *node, s schema, path []string) (*node, error) {
	d, err := visitMap(dest, origin)
	if d == nil || err != nil {
		return nil, err
	}
	dest = d
	for _, key := range fieldNames(dest, origin) {
		var cs schema
		if s != nil {
			cs = s.field(key)
		}
		val, err := walk(dest.field(key), origin.field(key), cs, append(path[:len(path):len(path)], key))
		if err != nil {
			return nil, err
		}
		if dest.kind != mapNode {
			// a null that stays null has no fields to set
			continue
		}
		dest.setField(key, val)
	}
	return dest, nil
}

// fieldNames are the keys of both maps, sorted.
func fieldNames(a, b *node) []string {
	a.expand()
	b.expand()
	var out []string
	for _, n := range []*node{a, b} {
		if n == nil || n.kind != mapNode {
			continue
		}
		for _, k := range n.keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// visitMap is merge2's Merger.VisitMap.
func visitMap(dest, origin *node) (*node, error) {
	if missingOrNull(dest) {
		ps, _ := smpDirectiveOf(origin)
		if ps == smpDelete {
			return nil, nil
		}
		// keep an explicit null of the destination the patch does not set
		if origin == nil && dest != nil && dest.text != "" {
			return &node{kind: scalarNode, text: dest.text, null: true, keep: true}, nil
		}
		return origin, nil
	}
	return mergeDirective(dest, origin)
}

// visitList is merge2's Merger.VisitList for an associative list.
func visitList(dest, origin *node) (*node, error) {
	if missingOrNull(dest) {
		return origin, nil
	}
	return mergeDirective(dest, origin)
}

// mergeDirective is the end of merge2's visits of a list: a null patch
// deletes, "$patch: delete" deletes, "$patch: replace" takes the patch,
// anything else keeps the destination.
func mergeDirective(dest, origin *node) (*node, error) {
	if origin != nil && origin.null {
		return nil, nil
	}
	ps, err := smpDirectiveOf(origin)
	if err != nil {
		return nil, err
	}
	switch ps {
	case smpDelete:
		return nil, nil
	case smpReplace:
		return origin, nil
	}
	return dest, nil
}

// smpDirectiveOf reads and removes the "$patch" directive of a patch node.
func smpDirectiveOf(patch *node) (smpDirective, error) {
	if patch == nil {
		return smpMerge, nil
	}
	switch patch.kind {
	case listNode:
		return listDirective(patch)
	case mapNode:
		d := patch.field(directiveKey)
		if d == nil {
			return smpMerge, nil
		}
		ps, ok := parseDirective(nodeText(d))
		if !ok {
			return smpUnknown, fmt.Errorf("unknown patch strategy '%s'", nodeText(d))
		}
		patch.clearField(directiveKey)
		return ps, nil
	}
	tag := "!!str"
	switch {
	case patch.null:
		tag = "!!null"
	case patch.val == true || patch.val == false:
		tag = "!!bool"
	}
	if _, ok := patch.val.(float64); ok {
		tag = "!!int"
		if strings.ContainsAny(patch.text, ".eE") {
			tag = "!!float"
		}
	}
	return smpUnknown, fmt.Errorf("no implemented strategic merge patch strategy for '%s' ('%s')", tag, patch.text)
}

func parseDirective(s string) (smpDirective, bool) {
	switch s {
	case "replace":
		return smpReplace, true
	case "delete":
		return smpDelete, true
	case "merge":
		return smpMerge, true
	}
	return smpUnknown, false
}

// listDirective reads a {"$patch": ...} element of a list, which applies
// to the list when it is alone in its map.
func listDirective(patch *node) (smpDirective, error) {
	patch.expand()
	var elem *node
	for _, item := range patch.items {
		if item == nil || item.kind != mapNode {
			continue
		}
		if item.hasField(directiveKey) {
			elem = item
			break
		}
	}
	if elem == nil || len(elem.keys) > 1 {
		return smpMerge, nil
	}
	v := elem.field(directiveKey)
	if v == nil {
		return smpMerge, nil
	}
	text := nodeText(v)
	ps, ok := parseDirective(text)
	if !ok {
		return smpUnknown, fmt.Errorf("unknown patch strategy '%s'", text)
	}
	return ps, setElement(patch, nil, []string{directiveKey}, []string{text})
}

func walkAssociativeList(dest, origin *node, s schema, path []string) (*node, error) {
	d, err := visitList(dest, origin)
	if d == nil || err != nil {
		return nil, err
	}
	dest = d
	keys := s.keys
	values := elementValues(dest, origin, keys)
	if len(values) != 0 || len(keys) > 0 {
		return setAssociativeElements(values, keys, dest, origin, s)
	}
	// a list of scalars: merge the values
	return setAssociativeElements(primitiveValues(dest, origin), []string{""}, dest, origin, s)
}

// elementValues are the merge key values of every element of the patch,
// then of the destination, without repetition.
func elementValues(dest, origin *node, keys []string) [][]string {
	dest.expand()
	origin.expand()
	var out [][]string
	for _, src := range []*node{origin, dest} {
		if src == nil || src.kind != listNode {
			continue
		}
		for _, item := range src.items {
			var vals []string
			for _, k := range keys {
				f := item.field(k)
				if nilOrEmpty(f) {
					vals = append(vals, "")
				} else {
					vals = append(vals, nodeText(f))
				}
			}
			if len(vals) == 0 || slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, vals) }) {
				continue
			}
			out = append(out, vals)
		}
	}
	return out
}

// primitiveValues are the texts of the items of the patch, then of the
// destination, without repetition.
func primitiveValues(dest, origin *node) [][]string {
	dest.expand()
	origin.expand()
	var out [][]string
	seen := map[string]bool{}
	for _, src := range []*node{origin, dest} {
		if src == nil || src.kind != listNode {
			continue
		}
		for _, item := range src.items {
			t := nodeText(item)
			if seen[t] {
				continue
			}
			seen[t] = true
			out = append(out, []string{t})
		}
	}
	return out
}

// validateKeys keeps the keys that have a value in some element.
func validateKeys(valuesList [][]string, values, keys []string) ([]string, []string) {
	valid := map[string]bool{}
	for _, vs := range valuesList {
		for i, v := range vs {
			if v != "" && i < len(keys) {
				valid[keys[i]] = true
			}
		}
	}
	if len(valid) == 0 {
		return keys, values
	}
	var vk, vv []string
	for _, k := range keys {
		if valid[k] {
			vk = append(vk, k)
		}
	}
	for i, v := range values {
		if v != "" || i < len(keys) && valid[keys[i]] {
			vv = append(vv, v)
		}
	}
	return vk, vv
}

// mergeValues treats two elements as one when their key values differ
// only where one of them is empty (a port without protocol).
func mergeValues(valuesList [][]string) [][]string {
	for i := range valuesList {
		v1 := valuesList[i]
		for j := range valuesList {
			if ok, vals := matchValues(v1, valuesList[j]); ok {
				valuesList[i] = vals
				valuesList[j] = vals
			}
		}
	}
	return valuesList
}

func matchValues(a, b []string) (bool, []string) {
	if len(a) != len(b) {
		return false, nil
	}
	common := false
	var res []string
	for i := range a {
		switch {
		case a[i] == b[i]:
			common = true
			res = append(res, a[i])
		case a[i] != "" && b[i] != "":
			return false, nil
		case a[i] != "":
			res = append(res, a[i])
		default:
			res = append(res, b[i])
		}
	}
	return common, res
}

func setAssociativeElements(valuesList [][]string, keys []string, dest, origin *node, s schema) (*node, error) {
	items := &node{kind: listNode}
	es := s.elements()
	if len(keys) > 1 {
		valuesList = mergeValues(valuesList)
	}
	var validKeys, validValues []string
	for _, values := range valuesList {
		if len(values) == 0 {
			continue
		}
		validKeys, validValues = validateKeys(valuesList, values, keys)
		d, o := elementList(dest, validKeys, validValues), elementList(origin, validKeys, validValues)
		val, err := walk(d, o, es, nil)
		if err != nil {
			return nil, err
		}
		exit := false
		for i, key := range validKeys {
			switch {
			case missingOrNull(val) || emptyMap(val):
				if err := setElement(dest, nil, validKeys, validValues); err != nil {
					return nil, err
				}
				exit = true
			case val.field(key) == nil && i < len(validValues) && validValues[i] != "":
				if err := setScalarField(val, key, validValues[i]); err != nil {
					return nil, err
				}
			}
		}
		if exit {
			continue
		}
		if err := setElement(items, val, validKeys, validValues); err != nil {
			return nil, err
		}
	}
	if len(valuesList) > 0 {
		var err error
		if dest, err = appendList(items, dest, validKeys); err != nil {
			return nil, err
		}
	}
	if missingOrNull(dest) {
		return nil, nil
	}
	return dest, nil
}

// setScalarField is yaml.SetField(key, NewScalarRNode(value)) on a merged
// element that lacks its merge key.
func setScalarField(n *node, key, value string) error {
	switch n.kind {
	case mapNode:
		n.setField(key, plainScalar(value))
		return nil
	case scalarNode:
		if key == "" {
			return nil // the scalar is set to its own text
		}
	}
	return kindError(mapNode, n)
}

// elementList is kyaml's RNode.ElementList: the first element of a list
// whose keys have the values.
func elementList(list *node, keys, values []string) *node {
	keys, values = validateKeys([][]string{values}, values, keys)
	if list == nil || list.kind != listNode {
		return nil
	}
	list.expand()
	if len(keys) == 0 {
		keys = []string{""}
	}
	if len(values) == 0 {
		values = []string{""}
	}
	if keys[0] == "" {
		for _, item := range list.items {
			if nodeText(item) == values[0] {
				return item
			}
		}
		return nil
	}
	if len(keys) != len(values) {
		return nil
	}
	for _, item := range list.items {
		if item == nil || item.kind != mapNode {
			continue
		}
		ok := true
		for i, k := range keys {
			f := item.field(k)
			if f == nil || nodeText(f) != values[i] {
				ok = false
				break
			}
		}
		if ok {
			return item
		}
	}
	return nil
}

// setElement is kyaml's ElementSetter: it replaces the elements whose keys
// have the values with element (removes them when element is nil), or
// appends element when none matches. Empty and null elements are dropped
// from the list on the way.
func setElement(list, element *node, keys, values []string) error {
	if len(keys) == 0 {
		keys = []string{""}
	}
	if list == nil || list.null {
		return nil
	}
	if list.kind != listNode {
		return kindError(listNode, list)
	}
	list.expand()
	mappingSetter := keys[0] != "" && len(values) > 0 && values[0] != ""
	var out []*node
	found := false
	for _, elem := range list.items {
		if missingOrNull(elem) || emptyMap(elem) {
			continue
		}
		if elem.kind != mapNode && mappingSetter {
			out = append(out, elem)
			continue
		}
		match := true
		var val *node
		for j := range keys {
			if j < len(values) {
				var err error
				if val, err = matchField(elem, keys[j], values[j]); err != nil {
					return err
				}
			}
			if val == nil {
				match = false
				break
			}
		}
		if !match {
			if len(values) > 0 {
				out = append(out, elem)
			}
			continue
		}
		found = true
		if element == nil {
			continue
		}
		out = append(out, element)
	}
	list.items = out
	if missingOrNull(element) {
		return nil
	}
	if !found {
		list.items = append(list.items, element)
	}
	return nil
}

// matchField is kyaml's FieldMatcher{Name, StringValue}: the value of
// field name when its text is value ("" matches any value).
func matchField(elem *node, name, value string) (*node, error) {
	if missingOrNull(elem) {
		return nil, nil
	}
	if name == "" {
		if elem.kind != scalarNode {
			return nil, kindError(scalarNode, elem)
		}
		if scalarText(elem) == value {
			return elem, nil
		}
		return nil, nil
	}
	if elem.kind != mapNode {
		return nil, kindError(mapNode, elem)
	}
	f := elem.field(name)
	if f == nil {
		return nil, nil
	}
	if value == "" || nodeText(f) == value {
		return f, nil
	}
	return nil, nil
}

// appendList adds the destination's elements to the merged ones (the
// patch's come first), replacing those with the same keys.
func appendList(dst, src *node, keys []string) (*node, error) {
	if src == nil || src.kind != listNode {
		return dst, nil
	}
	src.expand()
	dst.expand()
	for _, elem := range slices.Clone(src.items) {
		if len(keys) == 0 || keys[0] == "" {
			if err := setElement(dst, elem, []string{""}, []string{nodeText(elem)}); err != nil {
				return nil, err
			}
			continue
		}
		var v []string
		for _, key := range keys {
			if missingOrNull(elem) {
				dst.items = append(dst.items, elem)
				continue
			}
			if elem.kind != mapNode {
				return nil, kindError(mapNode, elem)
			}
			f := elem.field(key)
			if f == nil {
				dst.items = append(dst.items, elem)
				continue
			}
			v = append(v, nodeText(f))
		}
		if len(keys) > 1 {
			if err := setElement(dst, nil, keys, v); err != nil {
				return nil, err
			}
		}
		if err := setElement(dst, elem, keys, v); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// unchanged reports whether kyaml's walk of a resource value with no patch
// leaves it as it is. It does, except for lists merged by key (whose
// elements kyaml rebuilds): those must hold maps whose keys are all present,
// non-empty and distinct (lists of scalars: distinct, non-empty scalars).
func unchanged(v any, s schema) bool {
	if s == leafSchema {
		// No list below merges by key: every field of a leaf schema is a
		// leaf, and its lists are replaced.
		return true
	}
	switch t := v.(type) {
	case map[string]any:
		if s == nil {
			api, _ := t["apiVersion"].(string)
			kind, _ := t["kind"].(string)
			if api != "" && kind != "" {
				s = schemaFor(api, kind)
			}
		}
		for k, c := range t {
			var cs schema
			if s != nil {
				cs = s.field(k)
			}
			if !unchanged(c, cs) {
				return false
			}
		}
		return true
	case []any:
		if s == nil || !s.merge {
			return true // replaced, never walked
		}
		return uniqueByKeys(t, s.keys) && allUnchanged(t, s.elements())
	}
	return true
}

func allUnchanged(items []any, s schema) bool {
	for _, item := range items {
		if !unchanged(item, s) {
			return false
		}
	}
	return true
}

// uniqueByKeys: every element has every merge key, with a non-empty scalar
// value, and no two elements have the same keys (with several merge keys,
// see uniqueByPartialKeys).
func uniqueByKeys(items []any, keys []string) bool {
	if len(keys) > 1 {
		return uniqueByPartialKeys(items, keys)
	}
	var buf [smallSet]string
	small, large, dup := buf[:0], map[string]bool(nil), false
	for _, item := range items {
		var t string
		var ok bool
		if len(keys) == 0 {
			t, ok = scalarKey(item)
		} else {
			m, isMap := item.(map[string]any)
			if !isMap || len(m) == 0 {
				return false
			}
			t, ok = scalarKey(m[keys[0]])
		}
		if !ok {
			return false
		}
		if small, large, dup = seen(small, large, t); dup {
			return false
		}
	}
	return true
}

// seen adds s to a set of strings and reports whether it was there: the
// set is the slice while it is small (the lists of a resource mostly are),
// then the map.
func seen(small []string, large map[string]bool, s string) ([]string, map[string]bool, bool) {
	if large == nil {
		if slices.Contains(small, s) {
			return small, nil, true
		}
		if len(small) < smallSet {
			return append(small, s), nil, false
		}
		large = make(map[string]bool, 2*len(small))
		for _, t := range small {
			large[t] = true
		}
	}
	if large[s] {
		return small, large, true
	}
	large[s] = true
	return small, large, false
}

const smallSet = 16

// uniqueByPartialKeys is uniqueByKeys for several merge keys
// (containerPort and protocol), of which kyaml matches an element on those
// it has: every element must have the same keys of the set, at least one,
// each a non-empty scalar, and no two elements the same values. (With
// elements that have different keys, kyaml's merge reorders and repeats
// elements; the walk then runs for real.)
func uniqueByPartialKeys(items []any, keys []string) bool {
	var have []bool
	var buf [smallSet]string
	small, large, dup := buf[:0], map[string]bool(nil), false
	var sb strings.Builder
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		if i == 0 {
			have = make([]bool, len(keys))
			n := 0
			for j, k := range keys {
				if _, ok := m[k]; ok {
					have[j] = true
					n++
				}
			}
			if n == 0 {
				return false
			}
		}
		sb.Reset()
		for j, k := range keys {
			v, present := m[k]
			if present != have[j] {
				return false
			}
			if !present {
				continue
			}
			t, ok := scalarKey(v)
			if !ok {
				return false
			}
			sb.WriteString(t)
			sb.WriteByte(0)
		}
		if small, large, dup = seen(small, large, sb.String()); dup {
			return false
		}
	}
	return true
}

// scalarKey is the text of a non-null scalar, false for anything else or
// an empty text.
func scalarKey(v any) (string, bool) {
	var t string
	switch x := v.(type) {
	case string:
		t = x
	case bool:
		t = strconv.FormatBool(x)
	case nil, map[string]any, []any:
		return "", false
	default:
		f, ok := toFloat(x)
		if !ok {
			return "", false
		}
		t = formatNumber(f)
	}
	return t, t != ""
}
