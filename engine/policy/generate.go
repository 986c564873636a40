package policy

import (
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/variables"
)

// Generation is a compiled generate rule: one pattern, or a foreach of
// patterns.
type Generation struct {
	// Synchronize keeps generated resources in sync with the rule and the
	// trigger (generate.synchronize).
	Synchronize bool
	// OrphanDownstreamOnPolicyDelete keeps generated resources when the
	// policy or rule is deleted.
	OrphanDownstreamOnPolicyDelete bool
	// Existing is true when the rule generates for existing triggers when
	// the policy is created or updated: generate.generateExisting, or else
	// the policy's generateExisting (or the older
	// generateExistingOnPolicyUpdate).
	Existing bool
	Pattern  *GeneratePattern // nil for a foreach
	Foreach  []*GenerateForeach
}

// GenerateKind says where a generated resource's content comes from.
type GenerateKind int

// The three kinds of generate patterns.
const (
	GenerateData GenerateKind = iota
	GenerateClone
	GenerateCloneList
)

// GeneratePattern is what a generate rule (or one foreach entry) creates.
type GeneratePattern struct {
	Kind GenerateKind
	// Doc renders to the pattern with its variables substituted, as Kyverno
	// substitutes it: an object with apiVersion, kind, namespace, name,
	// uid, data, clone {namespace, name} and cloneList {namespace, kinds,
	// selector}, the fields the rule sets.
	Doc  *variables.Document
	Path string
}

// GenerateForeach is a compiled generate.foreach entry.
type GenerateForeach struct {
	List          *jmespath.Query
	ListSource    string
	Context       []*ContextEntry
	Preconditions *Conditions
	Pattern       *GeneratePattern
	Path          string
}

func (c *compiler) generation(p *Policy, g *kyverno.Generation, path string) *Generation {
	spec := p.doc.Spec
	out := &Generation{
		Synchronize:                    g.Synchronize,
		OrphanDownstreamOnPolicyDelete: g.OrphanDownstreamOnPolicyDelete,
		Existing:                       spec.GenerateExisting || spec.GenerateExistingOnPolicyUpdate != nil && *spec.GenerateExistingOnPolicyUpdate,
	}
	if g.GenerateExisting != nil {
		out.Existing = *g.GenerateExisting
	}
	n := 0
	if g.Data != nil {
		n++
	}
	if g.Clone != nil && (g.Clone.Name != "" || g.Clone.Namespace != "") {
		n++
	}
	if g.CloneList != nil && g.CloneList.Kinds != nil {
		n++
	}
	if g.Foreach != nil {
		n++
	}
	if n > 1 {
		c.errorf(engine.CodeInvalidPolicy, path, "only one of generate patterns(data, clone, cloneList and foreach) can be specified")
		return out
	}
	if g.Foreach != nil {
		for i := range g.Foreach {
			f := &g.Foreach[i]
			fp := fmt.Sprintf("%s.foreach[%d]", path, i)
			fe := &GenerateForeach{ListSource: f.List, Path: fp}
			fe.List = c.foreachList(f.List, fp+".list")
			fe.Context = c.contextEntries(f.Context, fp+".context")
			if f.Preconditions != nil {
				fe.Preconditions = c.anyAll(f.Preconditions, fp+".preconditions")
			}
			fe.Pattern = c.generatePattern(p, &f.GeneratePattern, fp)
			out.Foreach = append(out.Foreach, fe)
		}
		return out
	}
	out.Pattern = c.generatePattern(p, &g.GeneratePattern, path)
	return out
}

func (c *compiler) generatePattern(p *Policy, g *kyverno.GeneratePattern, path string) *GeneratePattern {
	out := &GeneratePattern{Kind: GenerateData, Path: path}
	doc := map[string]any{}
	for k, v := range map[string]string{"apiVersion": g.APIVersion, "kind": g.Kind, "namespace": g.Namespace, "name": g.Name, "uid": g.UID} {
		if v != "" {
			doc[k] = v
		}
	}
	cloneList := g.CloneList != nil && len(g.CloneList.Kinds) > 0
	switch {
	case cloneList:
		out.Kind = GenerateCloneList
		cl := map[string]any{"kinds": jsonconv.Strings(g.CloneList.Kinds)}
		if g.CloneList.Namespace != "" {
			cl["namespace"] = g.CloneList.Namespace
		}
		if s := g.CloneList.Selector; s != nil {
			cl["selector"] = selectorDoc(s)
		}
		doc["cloneList"] = cl
	case g.Clone != nil && g.Clone.Name != "":
		out.Kind = GenerateClone
		cl := map[string]any{"name": g.Clone.Name}
		if g.Clone.Namespace != "" {
			cl["namespace"] = g.Clone.Namespace
		}
		doc["clone"] = cl
	default:
		if g.Data != nil {
			doc["data"] = g.Data
		}
	}
	if !cloneList {
		if g.Kind == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".kind", "kind can not be empty")
		}
		if g.Name == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".name", "name can not be empty")
		}
		if g.APIVersion == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".apiVersion", "apiVersion can not be empty")
		}
	}
	if g.Kind != "" {
		cluster := clusterScopedKind(g.APIVersion, g.Kind)
		switch {
		case !cluster && g.Namespace == "":
			c.errorf(engine.CodeInvalidPolicy, path+".namespace", "target namespace must be set for a namespaced resource")
		case cluster && g.Namespace != "":
			c.errorf(engine.CodeInvalidPolicy, path+".namespace", "target namespace must not be set for a cluster-wide resource")
		}
	}
	if cloneList {
		cluster := clusterScopedKind("", g.CloneList.Kinds[0])
		for _, k := range g.CloneList.Kinds[1:] {
			if clusterScopedKind("", k) != cluster {
				c.errorf(engine.CodeInvalidPolicy, path+".cloneList.kinds", "mixed scope of target resources is forbidden")
				break
			}
		}
		if !cluster && g.CloneList.Namespace == "" {
			c.errorf(engine.CodeInvalidPolicy, path+".cloneList.namespace", "namespace is required for namespaced target resources")
		}
		if p.Namespaced() && g.CloneList.Namespace != p.namespace {
			c.errorf(engine.CodeInvalidPolicy, path+".cloneList.namespace", "a namespaced policy cannot clone resources from other namespace, expected: %v, received: %v", p.namespace, g.CloneList.Namespace)
		}
	}
	out.Doc = c.documentAt(doc, path)
	return out
}

func selectorDoc(s *kyverno.LabelSelector) map[string]any {
	out := map[string]any{}
	if len(s.MatchLabels) > 0 {
		ml := map[string]any{}
		for k, v := range s.MatchLabels {
			ml[k] = v
		}
		out["matchLabels"] = ml
	}
	if len(s.MatchExpressions) > 0 {
		var exprs []any
		for _, e := range s.MatchExpressions {
			m := map[string]any{"key": e.Key, "operator": e.Operator}
			if len(e.Values) > 0 {
				m["values"] = jsonconv.Strings(e.Values)
			}
			exprs = append(exprs, m)
		}
		out["matchExpressions"] = exprs
	}
	return out
}

// clusterScopedKind reports whether a built-in kind is cluster scoped.
// Kyverno asks the API server's discovery; without a cluster, the kinds of
// Kubernetes itself are known here and every other kind is namespaced.
// kind may be written "apiVersion/Kind" (cloneList kinds).
func clusterScopedKind(apiVersion, kind string) bool {
	if i := strings.LastIndex(kind, "/"); i >= 0 {
		apiVersion, kind = kind[:i], kind[i+1:]
	}
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	if apiVersion == "" {
		return kyverno.ClusterScopedKind(kind)
	}
	return kyverno.ClusterScoped(group, kind)
}

// ClusterScoped reports whether a kind is one of the cluster-scoped kinds
// this engine knows (see clusterScopedKind); hosts with discovery should
// prefer it.
func ClusterScoped(apiVersion, kind string) bool { return clusterScopedKind(apiVersion, kind) }
