package pattern

import (
	"sort"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// Kyverno expands wildcard keys under metadata.labels and
// metadata.annotations (wildcards.ExpandInMetadata): when a map pattern
// holding "metadata" meets a resource with metadata, each label or
// annotation key with '*' or '?' is replaced by the first resource key it
// matches (anchors kept: "X(fluxcd.io/*)" becomes "X(fluxcd.io/v1)"), and
// entries whose value is not a string are dropped. Kyverno does this by
// mutating the pattern, so the expanded map stays in place for the rest of
// the evaluation (for the next element of a list, say). Verdict keeps the
// compiled pattern immutable and records the replacement in the state.
//
// Where several resource keys match, Kyverno picks one in Go's random map
// order; Verdict picks the smallest.

// expandMetadata is ExpandInMetadata for the map whose metadata entry is me.
func (st *state) expandMetadata(me *entry, rm map[string]any) {
	rmeta := rm["metadata"]
	if rmeta == nil {
		return
	}
	mn := st.resolve(me.val)
	if mn.kind != nMap {
		return
	}
	rmm, ok := rmeta.(map[string]any)
	if !ok {
		return
	}
	st.expandTag(mn.labels, "labels", rmm)
	st.expandTag(mn.annotations, "annotations", rmm)
}

func (st *state) expandTag(te *entry, tag string, rmeta map[string]any) {
	if te == nil {
		return
	}
	cur := st.resolve(te.val)
	if cur.kind != nMap {
		return
	}
	rtag, ok := lookupTag(rmeta, tag).(map[string]any)
	if !ok || rtag == nil {
		return
	}
	if !cur.needsExpand {
		return // the expansion would rebuild the same map
	}
	pm := cur.raw.(map[string]any)
	keys := make([]string, 0, len(pm))
	for k := range pm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(pm))
	for _, k := range keys {
		v, ok := pm[k].(string)
		if !ok {
			continue
		}
		if !wildcard.Has(k) {
			out[k] = v
			continue
		}
		if kind, name := parseAnchor(k); kind != anchorNone {
			out[anchorString(kind, expandKey(name, rtag, st.budget))] = v
		} else {
			out[expandKey(k, rtag, st.budget)] = v
		}
	}
	c := compiler{tracked: st.p.tracked, track: st.dynamicTrack}
	n := c.node(out, nil)
	if st.overrides == nil {
		st.overrides = map[*node]*node{}
	}
	st.overrides[te.val] = n
}

// dynamicTrack numbers an anchor key first met in an expanded map.
func (st *state) dynamicTrack(key string) int {
	if id, ok := st.dynamic[key]; ok {
		return id
	}
	if st.dynamic == nil {
		st.dynamic = map[string]int{}
	}
	st.found = append(st.found, 0)
	id := len(st.found) - 1
	st.dynamic[key] = id
	return id
}

// lookupTag finds tag in a resource map the way Kyverno's getPatternValue
// does: the key itself, or a key that parses as an anchor on it.
func lookupTag(m map[string]any, tag string) any {
	if v, ok := m[tag]; ok {
		return v
	}
	best, found := "", false
	for k := range m {
		if kind, name := parseAnchor(k); kind != anchorNone && name == tag && (!found || k < best) {
			best, found = k, true
		}
	}
	if !found {
		return nil
	}
	return m[best]
}

// expandKey returns the smallest resource key with a string value that the
// wildcard key matches, or the key itself. The matches are charged to b
// (nil: no limit); Validate reads a spent budget.
func expandKey(k string, rtag map[string]any, b *engine.Budget) string {
	best, found := "", false
	for rk, rv := range rtag {
		if _, ok := rv.(string); !ok {
			continue
		}
		if m, _ := b.Match(k, rk); m && (!found || rk < best) {
			best, found = rk, true
		}
	}
	if !found {
		return k
	}
	return best
}

// restOf returns the non-anchor entries of a map in evaluation order. The
// order depends on which values hold anchors, which an expansion can change.
func (st *state) restOf(pn *node) []*entry {
	if st.overrides == nil || !st.overridden(pn.labels) && !st.overridden(pn.annotations) {
		return pn.rest
	}
	var front, back []*entry
	for _, e := range sortedEntries(pn.rest) {
		if e.kind == anchorGlobal || st.resolve(e.val).nested {
			front = append(front, e)
		} else {
			back = append(back, e)
		}
	}
	return restOrder(front, back)
}

func (st *state) overridden(e *entry) bool {
	if e == nil {
		return false
	}
	_, ok := st.overrides[e.val]
	return ok
}

func sortedEntries(es []*entry) []*entry {
	out := append([]*entry(nil), es...)
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
