package manifests

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
)

// ravel flattens v into dotted keys ("spec.ports.0.port") and their scalar
// values, as the library's mapnode Ravel: null values, empty maps and
// empty lists leave no key.
func ravel(v any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	join := func(prefix, k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case nil:
		case map[string]any:
			for k, c := range t {
				walk(join(prefix, k), c)
			}
		case []any:
			for i, c := range t {
				walk(join(prefix, strconv.Itoa(i)), c)
			}
		default:
			out[prefix] = t
		}
	}
	walk("", v)
	return out
}

// mask drops the keys that m matches, or one of whose parents it matches
// (the library's Mask).
func mask(rav map[string]any, m *keyMatcher) map[string]any {
	out := make(map[string]any, len(rav))
	for k, v := range rav {
		if !maskedKey(k, m) {
			out[k] = v
		}
	}
	return out
}

func maskedKey(k string, m *keyMatcher) bool {
	for i := 0; i < len(k); i++ {
		if k[i] == '.' && m.match(k[:i]) {
			return true
		}
	}
	return m.match(k)
}

// findManifests is the library's FindManifestYAML: the manifests of the
// resource's kind, then the one with its group and name (and namespace
// when several have them), else up to three found by values.
func findManifests(docs []map[string]any, o map[string]any, ignore []string, compiled map[string]*regexp.Regexp, b *engine.Budget) ([]map[string]any, error) {
	ref := objectRef(o)
	var sameKind []map[string]any
	for _, d := range docs {
		if k, _ := d["kind"].(string); k == ref.Kind && k != "" {
			sameKind = append(sameKind, d)
		}
	}
	if len(sameKind) == 0 {
		return nil, nil
	}
	apiVersion, _ := o["apiVersion"].(string)
	if strings.Count(apiVersion, "/") <= 1 {
		var named []map[string]any
		for _, d := range sameKind {
			r := objectRef(d)
			if r.Group == ref.Group && r.Kind == ref.Kind && r.Name == ref.Name {
				named = append(named, d)
			}
		}
		if len(named) == 1 {
			return named, nil
		}
		if len(named) > 1 {
			for _, d := range named {
				if objectRef(d).Namespace == ref.Namespace {
					return []map[string]any{d}, nil
				}
			}
			return named[:1], nil
		}
	}
	return searchByValue(sameKind, o, ignore, compiled, b)
}

// searchByValue is the library's ManifestSearchByValue: each manifest
// scores one per field of the resource it holds with the same value; the
// best (up to three) are the candidates. The library stops counting early
// at a point that depends on map order; this counts every field.
func searchByValue(docs []map[string]any, o map[string]any, ignore []string, compiled map[string]*regexp.Regexp, b *engine.Budget) ([]map[string]any, error) {
	m := newKeyMatcher(ignore, compiled)
	obj := mask(ravel(o), m)
	type cand struct {
		doc   map[string]any
		table map[string]any
		count int
	}
	cands := make([]cand, len(docs))
	for i, d := range docs {
		cands[i] = cand{doc: d, table: mask(ravel(d), m)}
		if err := b.Step(len(cands[i].table)); err != nil {
			return nil, err
		}
	}
	for k, v := range obj {
		// A step per manifest a field of the resource is compared with.
		if err := b.Step(len(cands)); err != nil {
			return nil, err
		}
		want := fmt.Sprintf("%v", v)
		for i := range cands {
			if got, ok := cands[i].table[k]; ok && fmt.Sprintf("%v", got) == want {
				cands[i].count++
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].count > cands[j].count })
	var out []map[string]any
	for _, c := range cands {
		if c.count == cands[0].count && len(out) < maxCandidates {
			out = append(out, c.doc)
		}
	}
	return out, nil
}

// directMatch compares the signed manifest with the resource: the diff
// without the ignored fields, image canonicalization (nginx and
// docker.io/nginx:latest) and a namespace the manifest does not set.
func directMatch(manifest, o map[string]any, ignore []string, compiled map[string]*regexp.Regexp, b *engine.Budget) (bool, *Diff, error) {
	rm, ro := ravel(manifest), ravel(o)
	if err := b.Step(len(rm) + len(ro)); err != nil {
		return false, nil, err
	}
	d := diff(rm, ro)
	d = removeCanonicalizedImage(d)
	if len(d) == 0 {
		return true, nil, nil
	}
	// The library's Filter appends "*" to each field.
	patterns := make([]string, len(ignore))
	for i, f := range ignore {
		patterns[i] = f + "*"
	}
	m := newKeyMatcher(patterns, compiled)
	kept := d[:0]
	for _, it := range d {
		if m.match(it.Key) {
			continue
		}
		if it.Key == "metadata.namespace" && it.Values["before"] == nil {
			continue
		}
		kept = append(kept, it)
	}
	if len(kept) == 0 {
		return true, nil, nil
	}
	return false, &Diff{Items: kept}, nil
}

// diff is the library's FindDiffBetweenNodes on raveled maps: created,
// updated and deleted keys, and keys whose values differ in type.
func diff(m1, m2 map[string]any) []Difference {
	if reflect.DeepEqual(m1, m2) {
		return nil
	}
	var items, typeDiffs []Difference
	for k, v1 := range m1 {
		v2, ok := m2[k]
		switch {
		case !ok:
			items = append(items, Difference{Key: k, Values: map[string]any{"before": v1, "after": nil}})
		case reflect.TypeOf(v1) != reflect.TypeOf(v2):
			typeDiffs = append(typeDiffs, Difference{Key: k, Values: map[string]any{
				"before": fmt.Sprintf("(type: %T) %s", v1, v1),
				"after":  fmt.Sprintf("(type: %T) %s", v2, v2),
			}})
		case v1 != v2:
			items = append(items, Difference{Key: k, Values: map[string]any{"before": v1, "after": v2}})
		}
	}
	for k, v2 := range m2 {
		if _, ok := m1[k]; !ok {
			items = append(items, Difference{Key: k, Values: map[string]any{"before": nil, "after": v2}})
		}
	}
	// Sorted first so that the list pass below is deterministic.
	sort.SliceStable(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	items = removeKeyDiffsInList(items)
	items = removeDefaultConversion(items)
	items = append(items, typeDiffs...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	return items
}

var listIndex = regexp.MustCompile(`\.\d+\.`)

// removeKeyDiffsInList is the library's removeKeyDiffsInListNode: a value
// that only moved to another index of a list is not a difference.
func removeKeyDiffsInList(items []Difference) []Difference {
	var out []Difference
	for _, it := range items {
		beforeNil, afterNil := it.Values["before"] == nil, it.Values["after"] == nil
		keep := true
		if listIndex.MatchString(it.Key) && (beforeNil || afterNil) {
			search, err := regexp.Compile(listIndex.ReplaceAllLiteralString(it.Key, `\.\d+\.`))
			for _, t := range items {
				if err != nil || !search.MatchString(t.Key) {
					continue
				}
				afterMatched := it.Values["before"] == t.Values["after"] && t.Values["before"] == nil && afterNil
				beforeMatched := it.Values["after"] == t.Values["before"] && t.Values["after"] == nil && beforeNil
				if afterMatched || beforeMatched {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, it)
		}
	}
	return out
}

// removeDefaultConversion is the library's removeDiffWithDefaultConversion:
// a key present on one side only with a zero value is not a difference.
// The library compares reflect.Values, which holds for the empty string
// only.
func removeDefaultConversion(items []Difference) []Difference {
	var out []Difference
	for _, it := range items {
		b, a := it.Values["before"], it.Values["after"]
		if (b == nil) != (a == nil) && (b == "" || a == "") {
			continue
		}
		out = append(out, it)
	}
	return out
}

// removeCanonicalizedImage drops image diffs that are only Docker's
// canonical form (nginx:1 → docker.io/nginx:1, ubuntu → ubuntu:latest).
func removeCanonicalizedImage(items []Difference) []Difference {
	var out []Difference
	for _, it := range items {
		if strings.HasSuffix(it.Key, "image") {
			b, ok1 := it.Values["before"].(string)
			a, ok2 := it.Values["after"].(string)
			if ok1 && ok2 && ("docker.io/"+b == a || b+":latest" == a) {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}
