package layout

import (
	"reflect"
	"strings"
)

// Fields lists the JSON fields of a struct type with encoding/json's
// rules: exported fields, names from the json tag, "-" skipped, untagged
// embedded structs promoting their fields, and of several fields with
// the same name the least nested (then the tagged) one; a name still
// ambiguous is dropped. fields maps each JSON name to the index path of
// its field (for reflect.Value.FieldByIndex); lower holds the lower-cased
// names, to tell a key json would match case-insensitively. Fields with
// the ",string" option are only in lower, so that a key naming them is
// left to the JSON round trip.
func Fields(t reflect.Type) (fields map[string][]int, lower map[string]bool) {
	type cand struct {
		name   string
		index  []int
		tagged bool
		str    bool
	}
	var cands []cand
	type level struct {
		t     reflect.Type
		index []int
	}
	current := []level{{t: t}}
	visited := map[reflect.Type]bool{}
	for len(current) > 0 {
		var next []level
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := 0; i < l.t.NumField(); i++ {
				sf := l.t.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(append([]int(nil), l.index...), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{t: ft, index: index})
					continue
				}
				tagged := name != ""
				if name == "" {
					name = sf.Name
				}
				str := false
				for o := range strings.SplitSeq(opts, ",") {
					if o == "string" {
						str = true
					}
				}
				cands = append(cands, cand{name: name, index: index, tagged: tagged, str: str})
			}
		}
		current = next
	}
	// Dominant field per name: shortest index, then tagged; a tie drops
	// the name, as encoding/json does.
	best := map[string][]cand{}
	for _, c := range cands {
		best[c.name] = append(best[c.name], c)
	}
	fields = make(map[string][]int, len(best))
	lower = make(map[string]bool, len(best))
	for name, cs := range best {
		depth := len(cs[0].index)
		var top []cand
		for _, c := range cs {
			switch {
			case len(c.index) < depth:
				depth, top = len(c.index), []cand{c}
			case len(c.index) == depth:
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []cand
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			top = tagged
		}
		if len(top) != 1 {
			continue
		}
		lower[strings.ToLower(name)] = true
		if top[0].str {
			// Matching the key must fall back: fold lookup says yes.
			continue
		}
		fields[name] = top[0].index
	}
	return fields, lower
}
