package mpol

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// builtinsYAML is the structured-merge-diff schema of Kubernetes' built-in
// kinds (gen_builtins.go): the types Kyverno's CLI merges
// ApplyConfigurations with.
//
//go:embed builtins.yaml
var builtinsYAML []byte

// typeSet is a parsed builtins.yaml: the parser of its types, the type of
// each kind, and the group versions it has a schema document of.
type typeSet struct {
	parser *typed.Parser
	kinds  map[string]string
	gvs    map[string]bool
}

// builtins is read on the first ApplyConfiguration (300 KB of YAML, parsed
// once per process, by readBuiltins).
var builtins = sync.OnceValues(func() (*typeSet, error) {
	kinds, types, err := readBuiltins(builtinsYAML)
	if err != nil {
		return nil, err
	}
	ts := &typeSet{parser: &typed.Parser{Schema: smdschema.Schema{Types: types}}, kinds: kinds, gvs: map[string]bool{}}
	for k := range kinds {
		ts.gvs[k[:strings.LastIndexByte(k, '/')]] = true
	}
	return ts, nil
})

// readBuiltins reads builtins.yaml as go-yaml reads it into
// structured-merge-diff's types (their yaml tags): with the fast YAML
// parser (kyverno.ParseDocument) and smdReader, several times faster, or
// with go-yaml when either declines the document.
func readBuiltins(data []byte) (map[string]string, []smdschema.TypeDef, error) {
	if v, ok := kyverno.ParseDocument(string(data)); ok {
		var r smdReader
		kinds, types := r.builtins(v)
		if !r.bad {
			return kinds, types, nil
		}
	}
	var in struct {
		Kinds map[string]string   `yaml:"kinds"`
		Types []smdschema.TypeDef `yaml:"types"`
	}
	if err := yaml.Unmarshal(data, &in); err != nil {
		return nil, nil, fmt.Errorf("mpol: builtins.yaml: %w", err)
	}
	return in.Kinds, in.Types, nil
}

// smdReader converts the JSON values of builtins.yaml into
// structured-merge-diff's schema types, field by field as go-yaml fills
// them from their yaml tags. Anything it does not expect (a key, a type)
// sets bad: the caller then uses go-yaml.
type smdReader struct {
	bad bool
}

// fields calls f for each key of v, a mapping, whose value is not null
// (go-yaml leaves the field at its zero value).
func (r *smdReader) fields(v any, f func(k string, e any) bool) {
	m, ok := v.(map[string]any)
	if !ok {
		r.bad = r.bad || v != nil
		return
	}
	for k, e := range m {
		if e != nil && !f(k, e) {
			r.bad = true
		}
	}
}

func (r *smdReader) list(v any, f func(e any)) {
	l, ok := v.([]any)
	if !ok {
		r.bad = true
		return
	}
	for _, e := range l {
		f(e)
	}
}

func (r *smdReader) str(v any) string {
	s, ok := v.(string)
	if !ok {
		r.bad = true
	}
	return s
}

func (r *smdReader) builtins(v any) (kinds map[string]string, types []smdschema.TypeDef) {
	r.fields(v, func(k string, e any) bool {
		switch k {
		case "kinds":
			kinds = map[string]string{}
			r.fields(e, func(k string, e any) bool {
				kinds[k] = r.str(e)
				return true
			})
		case "types":
			types = make([]smdschema.TypeDef, 0, len(asList(e)))
			r.list(e, func(e any) {
				var t smdschema.TypeDef
				r.fields(e, func(k string, e any) bool {
					if k == "name" {
						t.Name = r.str(e)
						return true
					}
					return r.atom(&t.Atom, k, e)
				})
				types = append(types, t)
			})
		default:
			return false
		}
		return true
	})
	return kinds, types
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// atom sets the member k of an Atom (inlined in TypeDef and TypeRef).
func (r *smdReader) atom(a *smdschema.Atom, k string, e any) bool {
	switch k {
	case "scalar":
		s := smdschema.Scalar(r.str(e))
		a.Scalar = &s
	case "list":
		l := &smdschema.List{}
		r.fields(e, func(k string, e any) bool {
			switch k {
			case "elementType":
				l.ElementType = r.typeRef(e)
			case "elementRelationship":
				l.ElementRelationship = smdschema.ElementRelationship(r.str(e))
			case "keys":
				l.Keys = make([]string, 0, len(asList(e)))
				r.list(e, func(e any) { l.Keys = append(l.Keys, r.str(e)) })
			default:
				return false
			}
			return true
		})
		a.List = l
	case "map":
		m := &smdschema.Map{}
		r.fields(e, func(k string, e any) bool {
			switch k {
			case "fields":
				m.Fields = make([]smdschema.StructField, 0, len(asList(e)))
				r.list(e, func(e any) { m.Fields = append(m.Fields, r.structField(e)) })
			case "unions":
				m.Unions = make([]smdschema.Union, 0, len(asList(e)))
				r.list(e, func(e any) { m.Unions = append(m.Unions, r.union(e)) })
			case "elementType":
				m.ElementType = r.typeRef(e)
			case "elementRelationship":
				m.ElementRelationship = smdschema.ElementRelationship(r.str(e))
			default:
				return false
			}
			return true
		})
		a.Map = m
	default:
		return false
	}
	return true
}

func (r *smdReader) typeRef(v any) smdschema.TypeRef {
	var t smdschema.TypeRef
	r.fields(v, func(k string, e any) bool {
		switch k {
		case "namedType":
			s := r.str(e)
			t.NamedType = &s
		case "elementRelationship":
			er := smdschema.ElementRelationship(r.str(e))
			t.ElementRelationship = &er
		default:
			return r.atom(&t.Inlined, k, e)
		}
		return true
	})
	return t
}

func (r *smdReader) structField(v any) smdschema.StructField {
	var f smdschema.StructField
	r.fields(v, func(k string, e any) bool {
		switch k {
		case "name":
			f.Name = r.str(e)
		case "type":
			f.Type = r.typeRef(e)
		case "default":
			f.Default = r.value(e)
		default:
			return false
		}
		return true
	})
	return f
}

func (r *smdReader) union(v any) smdschema.Union {
	var u smdschema.Union
	r.fields(v, func(k string, e any) bool {
		switch k {
		case "discriminator":
			s := r.str(e)
			u.Discriminator = &s
		case "deduceInvalidDiscriminator":
			b, ok := e.(bool)
			u.DeduceInvalidDiscriminator = b
			return ok
		case "fields":
			u.Fields = make([]smdschema.UnionField, 0, len(asList(e)))
			r.list(e, func(e any) {
				var f smdschema.UnionField
				r.fields(e, func(k string, e any) bool {
					switch k {
					case "fieldName":
						f.FieldName = r.str(e)
					case "discriminatorValue":
						f.DiscriminatorValue = r.str(e)
					default:
						return false
					}
					return true
				})
				u.Fields = append(u.Fields, f)
			})
		default:
			return false
		}
		return true
	})
	return u
}

// value is a JSON value as go-yaml decodes it into an interface{}:
// map[interface{}]interface{} mappings and int integers. A float64 that is
// a whole number is taken for an integer: gen_builtins.go writes the
// OpenAPI defaults, JSON numbers, with go-yaml, which writes a whole
// float64 as an integer ("1", never "1.0").
func (r *smdReader) value(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case map[string]any:
		m := make(map[any]any, len(x))
		for k, e := range x {
			m[k] = r.value(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = r.value(e)
		}
		return l
	}
	return v
}

// errNoTypeConverter is Kubernetes' error for a kind whose group and
// version have no schema (Kyverno's CLI knows the built-in kinds only).
var errNoTypeConverter = errors.New("type converter must not be nil")

// typeOf returns the type of a kind: errNoTypeConverter when its group and
// version have no schema, Kubernetes' "no corresponding type" error when
// the kind is not one of theirs.
func (ts *typeSet) typeOf(gvk schema.GroupVersionKind) (*typed.ParseableType, error) {
	gv := gvk.GroupVersion().String()
	if !ts.gvs[gv] {
		return nil, errNoTypeConverter
	}
	name, ok := ts.kinds[gv+"/"+gvk.Kind]
	if !ok {
		return nil, fmt.Errorf("failed to convert patch object to typed object: no corresponding type for %v", gvk)
	}
	t := ts.parser.Type(name)
	return &t, nil
}

// mergeTyped merges patch into obj as the API server applies a mutating
// admission policy's ApplyConfiguration (Kubernetes'
// patch.ApplyStructuredMergeDiff): both typed as t, the patch refused
// when it sets atomic lists, maps or structs (unless allowAtomic,
// Kyverno's evaluation.useServerSideApply, which drops that guard), then
// merged. obj is not modified.
func mergeTyped(t typed.ParseableType, obj, patch map[string]any, allowAtomic bool) (map[string]any, error) {
	patchTyped, err := t.FromUnstructured(patch)
	if err != nil {
		return nil, fmt.Errorf("failed to convert patch object to typed object: %w", err)
	}
	if !allowAtomic {
		if atomics := findAtomics(nil, patchTyped.Schema(), patchTyped.TypeRef(), patchTyped.AsValue()); len(atomics) > 0 {
			return nil, fmt.Errorf("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
		}
	}
	liveTyped, err := t.FromUnstructured(obj, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
	}
	// The merge copies every field of the object; those the patch does
	// not reach are left out of it and put back after (prune, graft).
	// The pruned object is part of the object just validated.
	pruned := prune(liveTyped.Schema(), liveTyped.TypeRef(), obj, patch)
	//lint:ignore SA1019 validated as part of liveTyped, as the whole object; validating again is the cost this avoids
	prunedTyped := typed.AsTypedUnvalidated(value.NewValueInterface(pruned), liveTyped.Schema(), liveTyped.TypeRef())
	merged, err := prunedTyped.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("failed to merge patch: %w", err)
	}
	u := merged.AsValue().Unstructured()
	out, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to convert typed object to object: failed to convert value to unstructured for type %T", u)
	}
	return graft(liveTyped.Schema(), liveTyped.TypeRef(), out, obj, patch), nil
}

// prune returns the part of live that a merge of patch reads: at each
// struct or granular map (whose fields merge one by one), the fields
// patch sets, descending where both are objects; an atomic map, and
// every other value, whole. A merge of patch into the pruned object gives
// the fields patch sets; graft puts the others back.
func prune(s *smdschema.Schema, tr smdschema.TypeRef, live, patch map[string]any) map[string]any {
	a, ok := s.Resolve(tr)
	if !ok || a.Map == nil || a.Map.ElementRelationship == smdschema.Atomic {
		return live
	}
	out := make(map[string]any, len(patch))
	for k, pv := range patch {
		lv, ok := live[k]
		if !ok {
			continue
		}
		lm, lok := lv.(map[string]any)
		pm, pok := pv.(map[string]any)
		if !lok || !pok {
			out[k] = lv
			continue
		}
		out[k] = prune(s, fieldType(a.Map, k), lm, pm)
	}
	return out
}

// graft puts back into merged (the merge of patch into prune(live,
// patch)) the fields of live that prune left out. merged is modified.
func graft(s *smdschema.Schema, tr smdschema.TypeRef, merged, live, patch map[string]any) map[string]any {
	a, ok := s.Resolve(tr)
	if !ok || a.Map == nil || a.Map.ElementRelationship == smdschema.Atomic {
		return merged
	}
	for k, lv := range live {
		pv, inPatch := patch[k]
		if !inPatch {
			merged[k] = lv
			continue
		}
		lm, lok := lv.(map[string]any)
		pm, pok := pv.(map[string]any)
		mm, mok := merged[k].(map[string]any)
		if lok && pok && mok {
			merged[k] = graft(s, fieldType(a.Map, k), mm, lm, pm)
		}
	}
	return merged
}

// fieldType is the type of a struct's field or a map's values.
func fieldType(m *smdschema.Map, key string) smdschema.TypeRef {
	if sf, ok := m.FindField(key); ok {
		return sf.Type
	}
	return m.ElementType
}

// findAtomics is Kubernetes' findAtomics: the paths of the atomic lists,
// maps and structs a value sets.
func findAtomics(path []fieldpath.PathElement, s *smdschema.Schema, tr smdschema.TypeRef, v value.Value) (atomics []string) {
	a, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	if v.IsMap() && a.Map != nil {
		if a.Map.ElementRelationship == smdschema.Atomic {
			atomics = append(atomics, pathString(path))
		}
		v.AsMap().Iterate(func(key string, val value.Value) bool {
			if sf, ok := a.Map.FindField(key); ok {
				atomics = append(atomics, findAtomics(append(path, fieldpath.PathElement{FieldName: &key}), s, sf.Type, val)...)
			}
			return true
		})
	}
	if v.IsList() && a.List != nil {
		if a.List.ElementRelationship == smdschema.Atomic {
			atomics = append(atomics, pathString(path))
		}
		list := v.AsList()
		for i := 0; i < list.Length(); i++ {
			atomics = append(atomics, findAtomics(append(path, fieldpath.PathElement{Index: &i}), s, a.List.ElementType, list.At(i))...)
		}
	}
	return atomics
}

func pathString(path []fieldpath.PathElement) string {
	var sb strings.Builder
	for _, p := range path {
		sb.WriteString(p.String())
	}
	return sb.String()
}

// gvkOf is the group, version and kind of an object's apiVersion and kind.
func gvkOf(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}
