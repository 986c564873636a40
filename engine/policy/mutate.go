package policy

import (
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mutate"
	"github.com/verdict-policy/verdict/engine/variables"
)

// Mutation is a compiled mutate rule: a patch (strategic merge or JSON
// 6902) or a foreach, applied to the request's object, or with Targets, to
// existing resources (mutate existing).
type Mutation struct {
	// Patch is the rule's patchStrategicMerge or patchesJson6902; nil for a
	// foreach.
	Patch   *Patch
	Foreach []*MutateForeach
	// Targets are the existing resources to mutate; empty for a rule that
	// mutates the request's object.
	Targets []*Target
	// ExistingOnPolicyUpdate is mutate.mutateExistingOnPolicyUpdate, or
	// the policy's: targets are mutated when the policy is created or
	// updated too (the host replays existing triggers).
	ExistingOnPolicyUpdate bool
}

// Patch is one patch of a mutate rule or foreach, with its variables
// parsed. Exactly one of Strategic and JSON6902 is set.
type Patch struct {
	// Strategic is the patchStrategicMerge overlay; Overlay is it
	// converted, when it holds no variables (and converts).
	Strategic *variables.Document
	Overlay   *mutate.Overlay
	// JSON6902 is the patchesJson6902 text; Static is it decoded when it
	// holds no variables.
	JSON6902 *variables.Document
	Static   *mutate.JSONPatch
	Path     string
}

// MutateForeach is a compiled mutate.foreach entry.
type MutateForeach struct {
	List       *jmespath.Query
	ListSource string
	// Descending is the order of iteration: order: Descending, or no order
	// and a patchStrategicMerge (Kyverno's default for overlays).
	Descending    bool
	Context       []*ContextEntry
	Preconditions *Conditions
	Patch         *Patch // nil for a nested foreach
	Foreach       []*MutateForeach
	Path          string
}

// Target is a compiled mutate.targets entry: which resources to fetch, and
// the context and preconditions evaluated for each of them.
type Target struct {
	// Selector renders to the object {apiVersion, kind, namespace, name,
	// uid, selector}, variables substituted.
	Selector      *variables.Document
	Context       []*ContextEntry
	Preconditions *Conditions
	Path          string
}

func (c *compiler) mutation(p *Policy, m *kyverno.Mutation, path string) *Mutation {
	out := &Mutation{ExistingOnPolicyUpdate: p.doc.Spec.MutateExistingOnPolicyUpdate}
	if m.MutateExistingOnPolicyUpdate != nil {
		out.ExistingOnPolicyUpdate = *m.MutateExistingOnPolicyUpdate
	}
	n := 0
	if m.PatchStrategicMerge != nil || m.PatchesJSON6902 != "" {
		n++
		out.Patch = c.patch(m.PatchStrategicMerge, m.PatchesJSON6902, path, "/mutate", true)
		if m.PatchStrategicMerge == nil && m.PatchesJSON6902 != "" && jsonPatchPathHasVariables(m.PatchesJSON6902) {
			c.errorf(engine.CodeInvalidVariable, path+".patchesJson6902",
				"policy contains invalid variables: rule %q should not have variables in patchesJSON6902 path section", ruleName(path, p))
		}
	}
	if len(m.Foreach) > 0 {
		n++
		out.Foreach = c.mutateForeach(m.Foreach, path+".foreach", true)
	}
	if n != 1 {
		c.errorf(engine.CodeInvalidPolicy, path, "a mutate rule needs exactly one of patchStrategicMerge, patchesJson6902 or foreach")
	}
	for i := range m.Targets {
		out.Targets = append(out.Targets, c.target(&m.Targets[i], fmt.Sprintf("%s.targets[%d]", path, i)))
	}
	return out
}

// patch compiles a patchStrategicMerge or patchesJson6902; base is where
// Kyverno substitutes it ("/mutate" for a rule, "" for a foreach entry),
// for {{@}} and error paths.
//
// checkMeta applies Kyverno's check that labels and annotations are
// strings, which it makes on the rule's patch, or on the first foreach
// entry's.
func (c *compiler) patch(smp any, jsonPatch, path, base string, checkMeta bool) *Patch {
	if smp != nil && jsonPatch != "" {
		// Kyverno applies the strategic merge patch and ignores the other.
		jsonPatch = ""
	}
	if smp != nil {
		ppath := path + ".patchStrategicMerge"
		if _, ok := smp.(map[string]any); !ok {
			c.errorf(engine.CodeInvalidPolicy, ppath, "patchStrategicMerge must be an object")
		} else if checkMeta && !metadataStrings(smp.(map[string]any)) {
			c.errorf(engine.CodeInvalidPolicy, ppath, `labels and annotations supports only string values, "use double quotes around the non string values"`)
		}
		doc, err := variables.ParseDocumentAt(smp, base+"/patchStrategicMerge")
		if err != nil {
			c.add(prefixPath(trimDot(err), ppath), engine.CodeInvalidVariable, ppath)
			return &Patch{Path: ppath}
		}
		out := &Patch{Strategic: doc, Path: ppath}
		if !doc.HasVariables() {
			// The same overlay at every evaluation: converted once. An
			// overlay that does not convert fails when applied instead.
			if static, err := doc.Render(variables.Env{}); err == nil {
				out.Overlay, _ = mutate.NewOverlay(static)
			}
		}
		return out
	}
	ppath := path + ".patchesJson6902"
	doc, err := variables.ParseDocumentAt(jsonPatch, base+"/patchesJson6902")
	if err != nil {
		c.add(prefixPath(trimDot(err), ppath), engine.CodeInvalidVariable, ppath)
		return &Patch{Path: ppath}
	}
	out := &Patch{JSON6902: doc, Path: ppath}
	if base != "/mutate" {
		// Kyverno checks the patches of rules, not those of foreach
		// entries; a patch without variables is still decoded once.
		if !doc.HasVariables() {
			if jp, err := mutate.ParseJSON6902(jsonPatch); err == nil {
				out.Static = jp
			}
		}
		return out
	}
	// Kyverno checks the patch with its variables replaced by a word.
	text, err := doc.Render(variables.Env{Resolve: func(*jmespath.Query) (any, error) { return "kyvernojsonpatchvariable", nil }})
	if err != nil {
		c.add(prefixPath(err, ppath), engine.CodeInvalidVariable, ppath)
		return out
	}
	s, _ := text.(string)
	jp, err := mutate.ParseJSON6902(s)
	if err == nil {
		err = jp.Check()
	}
	if err != nil {
		c.errorf(engine.CodeInvalidPolicy, ppath, "%v", err)
		return out
	}
	if !doc.HasVariables() {
		out.Static = jp
	}
	return out
}

// trimDot drops the leading dot of the paths of a document's errors
// (".metadata.labels"), so that prefixPath joins them with one dot.
func trimDot(err error) error {
	return mapPaths(err, func(path string) string { return strings.TrimPrefix(path, ".") })
}

// documentAt parses a document of the rule found at path.
func (c *compiler) documentAt(raw any, path string) *variables.Document {
	d, err := variables.ParseDocument(raw)
	if err != nil {
		c.add(prefixPath(trimDot(err), path), engine.CodeInvalidVariable, path)
		d, _ = variables.ParseDocument(nil)
	}
	return d
}

// jsonPatchPathHasVariables is Kyverno's check that the paths of a rule's
// patchesJson6902, as written, hold no variable.
func jsonPatchPathHasVariables(text string) bool {
	jp, err := mutate.ParseJSON6902(text)
	if err != nil {
		return false
	}
	for _, p := range jp.Paths() {
		if variables.IsVariable(p) {
			return true
		}
	}
	return false
}

// ruleName is the name of the rule at path (spec.rules[i]...).
func ruleName(path string, p *Policy) string {
	var i int
	if _, err := fmt.Sscanf(path, "spec.rules[%d]", &i); err == nil && i < len(p.doc.Spec.Rules) {
		return p.doc.Spec.Rules[i].Name
	}
	if j := strings.Index(path, "["); j >= 0 {
		if k := strings.Index(path[j:], "]"); k > 0 {
			return path[j+1 : j+k]
		}
	}
	return ""
}

// metadataStrings is Kyverno's check that the labels and annotations of a
// patch (under metadata, or else under spec.template.metadata) are strings.
func metadataStrings(p map[string]any) bool {
	strs := func(meta any) bool {
		m, _ := meta.(map[string]any)
		for _, k := range []string{"labels", "annotations"} {
			vals, ok := m[k].(map[string]any)
			if !ok {
				continue
			}
			for _, v := range vals {
				if _, ok := v.(string); !ok {
					return false
				}
			}
		}
		return true
	}
	if meta, ok := p["metadata"]; ok {
		if _, isMap := meta.(map[string]any); isMap {
			return strs(meta)
		}
	}
	if spec, ok := p["spec"].(map[string]any); ok {
		tmpl, _ := spec["template"].(map[string]any)
		return strs(tmpl["metadata"])
	}
	return true
}

func (c *compiler) mutateForeach(in []kyverno.ForEachMutation, path string, top bool) []*MutateForeach {
	var out []*MutateForeach
	checked := !top
	for i := range in {
		f := &in[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		fe := &MutateForeach{ListSource: f.List, Path: p}
		fe.List = c.foreachList(f.List, p+".list")
		switch f.Order {
		case "":
			fe.Descending = f.PatchStrategicMerge != nil
		case "Ascending":
		case "Descending":
			fe.Descending = true
		default:
			c.errorf(engine.CodeInvalidPolicy, p+".order", "order %q is not Ascending or Descending", f.Order)
		}
		fe.Context = c.contextEntries(f.Context, p+".context")
		if f.Preconditions != nil {
			fe.Preconditions = c.anyAll(f.Preconditions, p+".preconditions")
		}
		n := 0
		if f.PatchStrategicMerge != nil || f.PatchesJSON6902 != "" {
			n++
			_, isMap := f.PatchStrategicMerge.(map[string]any)
			fe.Patch = c.patch(f.PatchStrategicMerge, f.PatchesJSON6902, p, "", !checked && isMap)
			checked = checked || isMap
		}
		if len(f.Foreach) > 0 {
			n++
			fe.Foreach = c.mutateForeach(f.Foreach, p+".foreach", false)
		}
		if n != 1 {
			c.errorf(engine.CodeInvalidPolicy, p, "a foreach needs exactly one of patchStrategicMerge, patchesJson6902 or foreach")
		}
		out = append(out, fe)
	}
	return out
}

func (c *compiler) target(t *kyverno.TargetResource, path string) *Target {
	out := &Target{Path: path}
	sel := map[string]any{}
	for k, v := range map[string]string{"apiVersion": t.APIVersion, "kind": t.Kind, "namespace": t.Namespace, "name": t.Name, "uid": t.UID} {
		if v != "" {
			sel[k] = v
		}
	}
	if t.Selector != nil {
		s := map[string]any{}
		if len(t.Selector.MatchLabels) > 0 {
			ml := map[string]any{}
			for k, v := range t.Selector.MatchLabels {
				ml[k] = v
			}
			s["matchLabels"] = ml
		}
		if len(t.Selector.MatchExpressions) > 0 {
			var exprs []any
			for _, e := range t.Selector.MatchExpressions {
				m := map[string]any{"key": e.Key, "operator": e.Operator}
				if len(e.Values) > 0 {
					vals := make([]any, len(e.Values))
					for i, v := range e.Values {
						vals[i] = v
					}
					m["values"] = vals
				}
				exprs = append(exprs, m)
			}
			s["matchExpressions"] = exprs
		}
		sel["selector"] = s
	}
	if t.Kind == "" {
		c.errorf(engine.CodeInvalidPolicy, path+".kind", "a target needs a kind")
	}
	out.Selector = c.documentAt(sel, path)
	out.Context = c.contextEntries(t.Context, path+".context")
	if t.Preconditions != nil {
		out.Preconditions = c.conditions(t.Preconditions, path+".preconditions")
	}
	return out
}
