package mpol

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

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
// once per process).
var builtins = sync.OnceValues(func() (*typeSet, error) {
	var in struct {
		Kinds map[string]string   `yaml:"kinds"`
		Types []smdschema.TypeDef `yaml:"types"`
	}
	if err := yaml.Unmarshal(builtinsYAML, &in); err != nil {
		return nil, fmt.Errorf("mpol: builtins.yaml: %w", err)
	}
	ts := &typeSet{parser: &typed.Parser{Schema: smdschema.Schema{Types: in.Types}}, kinds: in.Kinds, gvs: map[string]bool{}}
	for k := range in.Kinds {
		ts.gvs[k[:strings.LastIndexByte(k, '/')]] = true
	}
	return ts, nil
})

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
