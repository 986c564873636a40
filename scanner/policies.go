package scanner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Kind selects resources by API group, version and kind, as a policy's
// match block names them ("Pod", "apps/v1/Deployment", "v1/ConfigMap"),
// or by API group, version and resource, as the matchConstraints of a
// ValidatingPolicy name them (Resource set, Kind empty). An empty Group or
// Version is any ("" group with Version set is the core group); "*" is
// any too.
type Kind struct {
	Group, Version, Kind string
	// GroupSet is true when the selector named a group (or the core group
	// through "v1/Kind").
	GroupSet bool
	// Resource is the plural resource name ("pods", "*") of a selector of
	// a ValidatingPolicy's resourceRules.
	Resource string
}

// String is the selector as written in a policy: "group/version/resource"
// for a resource selector (the core group as "core").
func (k Kind) String() string {
	if k.Resource != "" {
		g := k.Group
		if g == "" {
			g = "core"
		}
		return g + "/" + k.Version + "/" + k.Resource
	}
	switch {
	case k.GroupSet && k.Group != "":
		return k.Group + "/" + k.Version + "/" + k.Kind
	case k.Version != "":
		return k.Version + "/" + k.Kind
	}
	return k.Kind
}

// parseKind parses a kind of a match block. Subresource selectors
// ("Pod/exec") are not scanned: ok is false.
func parseKind(s string) (Kind, bool) {
	parts := strings.Split(s, "/")
	last := parts[len(parts)-1]
	if last == "" || (last != "*" && !isUpper(last[0])) {
		return Kind{}, false // a subresource, or nothing
	}
	switch len(parts) {
	case 1:
		return Kind{Kind: last}, true
	case 2:
		if !isVersion(parts[0]) {
			return Kind{}, false
		}
		return Kind{Version: parts[0], Kind: last, GroupSet: true}, true
	case 3:
		return Kind{Group: parts[0], Version: parts[1], Kind: last, GroupSet: true}, true
	}
	return Kind{}, false
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// isVersion reports whether s is an API version ("v1", "v2beta1") or "*".
func isVersion(s string) bool {
	if s == "*" {
		return true
	}
	return len(s) >= 2 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}

// Matches reports whether k selects objects of apiVersion and kind. A
// resource selector compares the resource guessed from the kind (as
// Kyverno's CLI does for files).
func (k Kind) Matches(apiVersion, kind string) bool {
	if k.Resource != "" {
		if k.Resource != "*" {
			gvr, _ := meta.UnsafeGuessKindToResource(schema.FromAPIVersionAndKind(apiVersion, kind))
			if gvr.Resource != k.Resource {
				return false
			}
		}
	} else if k.Kind != "*" && k.Kind != kind {
		return false
	}
	group, version := groupOf(apiVersion), apiVersion[strings.LastIndex(apiVersion, "/")+1:]
	if k.Version != "" && k.Version != "*" && k.Version != version {
		return false
	}
	if k.GroupSet && k.Group != "*" && k.Group != group {
		return false
	}
	return true
}

// PolicyRef is a policy of the server as the scanner sees it.
type PolicyRef struct {
	// Kind is ClusterPolicy, Policy, ValidatingPolicy,
	// NamespacedValidatingPolicy, MutatingPolicy, NamespacedMutatingPolicy
	// or ValidatingAdmissionPolicy; Namespace is empty for the
	// cluster-wide kinds.
	Kind, Namespace, Name string
	// Hash is the content hash of the version the server uses.
	Hash string
	// Kinds are the kinds its rules match, for the rules a background scan
	// evaluates (for GenerateExisting policies: the triggers of their
	// generateExisting rules).
	Kinds []Kind
	// Rules are the names of those rules.
	Rules []string
}

// Key names the policy in a request's policy selector: "name", or
// "namespace/name" for a Policy.
func (p *PolicyRef) Key() string {
	if p.Namespace != "" {
		return p.Namespace + "/" + p.Name
	}
	return p.Name
}

// Matches reports whether one of p's kinds selects r (and, for a Policy,
// r is in its namespace).
func (p *PolicyRef) Matches(r *Resource) bool {
	if p.Namespace != "" && r.Namespace != p.Namespace {
		return false
	}
	for _, k := range p.Kinds {
		if k.Matches(r.APIVersion, r.Kind) {
			return true
		}
	}
	return false
}

// PolicySet is what a scan needs to know of the server's policies.
type PolicySet struct {
	// Background are the ready policies with rules a background scan
	// evaluates, sorted by key.
	Background []*PolicyRef
	// GenerateExisting are the ready policies with generate rules that
	// replay existing triggers (generateExisting), sorted by key.
	GenerateExisting []*PolicyRef
	// MutateExisting are the ready policies with mutate rules that patch
	// targets for existing triggers (mutateExistingOnPolicyUpdate), sorted
	// by key.
	MutateExisting []*PolicyRef
	// Versions maps every ready policy's key to its content hash.
	Versions map[string]string
	// Wildcard lists policies whose kinds include "*": a cluster scan
	// cannot list every kind and skips those rules.
	Wildcard []string
}

// Kinds are the kinds of every policy of the set, without duplicates, in
// a stable order.
func (s *PolicySet) Kinds() []Kind {
	seen := map[Kind]bool{}
	var out []Kind
	for _, list := range [][]*PolicyRef{s.Background, s.GenerateExisting, s.MutateExisting} {
		for _, p := range list {
			for _, k := range p.Kinds {
				if k.Kind == "*" || k.Resource == "*" || seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// LoadPolicies reads the server's policies (ListPolicies, and GetPolicy
// for each version not in cache) and compiles them with the engine to
// learn the kinds their background and generateExisting rules match.
// Policies that are not ready are left out. cache, when not nil, keeps the
// compiled policies by content hash across calls, so that a periodic scan
// fetches a policy document only when it changed.
func LoadPolicies(ctx context.Context, c *client.Client, cache map[string]*policy.Policy) (*PolicySet, error) {
	list, err := c.ListPolicies(ctx)
	if err != nil {
		return nil, fmt.Errorf("list policies: %w", err)
	}
	set := &PolicySet{Versions: map[string]string{}}
	for _, info := range list.GetPolicies() {
		if !info.GetReady() || !scannedKinds[info.GetKind()] {
			continue
		}
		ref := &PolicyRef{Kind: info.GetKind(), Namespace: info.GetNamespace(), Name: info.GetName(), Hash: info.GetContentHash()}
		set.Versions[ref.Key()] = ref.Hash
		p := cache[ref.Hash]
		if p == nil {
			got, err := c.GetPolicy(ctx, ref.Namespace, ref.Name)
			if err != nil {
				return nil, fmt.Errorf("get policy %s: %w", ref.Key(), err)
			}
			if p, err = compileDocument(ref.Key(), ref.Kind, got.GetDocument()); err != nil {
				return nil, err
			}
			if cache != nil {
				cache[ref.Hash] = p
			}
		}
		bg, gen, mut := policyKinds(p)
		if len(bg.Kinds) > 0 {
			b := *ref
			b.Kinds, b.Rules = bg.Kinds, bg.Rules
			set.Background = append(set.Background, &b)
		}
		if len(gen.Kinds) > 0 {
			g := *ref
			g.Kinds, g.Rules = gen.Kinds, gen.Rules
			set.GenerateExisting = append(set.GenerateExisting, &g)
		}
		if len(mut.Kinds) > 0 {
			m := *ref
			m.Kinds, m.Rules = mut.Kinds, mut.Rules
			set.MutateExisting = append(set.MutateExisting, &m)
		}
		if bg.wildcard || gen.wildcard || mut.wildcard {
			set.Wildcard = append(set.Wildcard, ref.Key())
		}
	}
	return set, nil
}

// scannedKinds are the policy kinds a scan evaluates.
var scannedKinds = map[string]bool{
	kyverno.KindClusterPolicy: true, kyverno.KindPolicy: true,
	vpol.KindValidatingPolicy: true, vpol.KindNamespacedValidatingPolicy: true,
	mpol.KindMutatingPolicy: true, mpol.KindNamespacedMutatingPolicy: true,
	ivpol.KindImageValidatingPolicy: true, ivpol.KindNamespacedImageValidatingPolicy: true,
	vap.KindPolicy: true,
	// GeneratingPolicies for generateExisting only.
	gpol.KindGeneratingPolicy: true, gpol.KindNamespacedGeneratingPolicy: true,
}

func compileDocument(key, kind string, doc []byte) (*policy.Policy, error) {
	if kind == vap.KindPolicy {
		docs, err := vap.Decode(key, doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
		}
		p, err := policy.CompileVAP(docs[0])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		return p, nil
	}
	if kind == ivpol.KindImageValidatingPolicy || kind == ivpol.KindNamespacedImageValidatingPolicy {
		docs, err := ivpol.Decode(key, doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
		}
		p, err := policy.CompileImageValidating(docs[0])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		return p, nil
	}
	if gpol.IsPolicy(vpol.Group+"/v1", kind) {
		docs, err := gpol.Decode(key, doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
		}
		p, err := policy.CompileGenerating(docs[0])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		return p, nil
	}
	if kind == vpol.KindValidatingPolicy || kind == vpol.KindNamespacedValidatingPolicy {
		docs, err := vpol.Decode(key, doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
		}
		p, err := policy.CompileValidating(docs[0])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		return p, nil
	}
	if kind == mpol.KindMutatingPolicy || kind == mpol.KindNamespacedMutatingPolicy {
		docs, err := mpol.Decode(key, doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		if len(docs) != 1 {
			return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
		}
		p, err := policy.CompileMutating(docs[0])
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", key, err)
		}
		return p, nil
	}
	docs, err := kyverno.DecodePolicies(key, doc)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", key, err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("policy %s: %d documents, want 1", key, len(docs))
	}
	p, err := policy.Compile(docs[0])
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", key, err)
	}
	return p, nil
}

type ruleKinds struct {
	Kinds    []Kind
	Rules    []string
	wildcard bool
}

func (rk *ruleKinds) add(r *policy.Rule) {
	rk.Rules = append(rk.Rules, r.Name)
	m := r.Raw.Match
	var kinds []string
	if m.Resources != nil {
		kinds = append(kinds, m.Resources.Kinds...)
	}
	for _, f := range append(append([]kyverno.ResourceFilter(nil), m.Any...), m.All...) {
		if f.Resources != nil {
			kinds = append(kinds, f.Resources.Kinds...)
		}
	}
	for _, s := range kinds {
		k, ok := parseKind(s)
		if !ok {
			continue
		}
		if k.Kind == "*" {
			rk.wildcard = true
		}
		if !containsKind(rk.Kinds, k) {
			rk.Kinds = append(rk.Kinds, k)
		}
	}
}

// addValidating adds the resources of the resourceRules of each variant
// of a ValidatingPolicy (its autogen variants included); subresources are
// not scanned. A JSON-mode policy has no resources to scan.
func (rk *ruleKinds) addValidating(vp *vpol.Policy) {
	for _, v := range vp.Variants() {
		rk.addResourceRules(v.MatchConstraints())
	}
}

// addResourceRules adds the resources of the resourceRules of mc (nil:
// none); subresources are not scanned.
func (rk *ruleKinds) addResourceRules(mc *admissionregistrationv1.MatchResources) {
	if mc == nil {
		return
	}
	for _, rule := range mc.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, ver := range rule.APIVersions {
				for _, res := range rule.Resources {
					if strings.Contains(res, "/") {
						continue
					}
					k := Kind{Group: g, Version: ver, Resource: res, GroupSet: true}
					if res == "*" {
						rk.wildcard = true
					}
					if !containsKind(rk.Kinds, k) {
						rk.Kinds = append(rk.Kinds, k)
					}
				}
			}
		}
	}
}

func containsKind(list []Kind, k Kind) bool {
	for _, v := range list {
		if v == k {
			return true
		}
	}
	return false
}

// policyKinds collects the kinds of the rules of p that a background scan
// evaluates (validate and verifyImages rules of a background policy that
// do not need admission data), of its generateExisting rules, and of its
// mutate rules with targets and mutateExistingOnPolicyUpdate.
func policyKinds(p *policy.Policy) (bg, gen, mut ruleKinds) {
	if p.Validating != nil {
		if p.Background {
			bg.addValidating(p.Validating)
		}
		return bg, gen, mut
	}
	if p.Mutating != nil {
		// Kyverno's background scans report whether the mutations of a
		// MutatingPolicy with background enabled have been applied.
		if p.Background {
			for _, v := range p.Mutating.Variants() {
				bg.addResourceRules(v.MatchConstraints())
			}
		}
		return bg, gen, mut
	}
	if p.ImageValidating != nil {
		if p.Background {
			for _, mc := range p.ImageValidating.MatchConstraints() {
				bg.addResourceRules(mc)
			}
		}
		return bg, gen, mut
	}
	if gp := p.Generating; gp != nil {
		// The triggers of generateExisting: the resources of its
		// resourceRules.
		if gp.GenerateExisting {
			gen.addResourceRules(gp.Document().Spec.MatchConstraints)
			gen.Rules = append(gen.Rules, gp.Name)
		}
		return bg, gen, mut
	}
	if p.VAP != nil {
		// Background: labelled reports.kyverno.io/enabled (policy.CompileVAP).
		// In a background scan a ValidatingAdmissionPolicy with bindings
		// is matched against its own matchConstraints too: their
		// resources are those it can report on.
		if p.Background {
			bg.addResourceRules(p.VAP.MatchConstraints())
		}
		return bg, gen, mut
	}
	for _, r := range p.Rules {
		if r.Raw == nil || r.UsesUserInfo {
			continue
		}
		switch {
		case r.Type == policy.Generate && r.Generate != nil && r.Generate.Existing:
			if p.Background {
				gen.add(r)
			}
		case r.Type == policy.Mutate && r.Mutate != nil && len(r.Mutate.Targets) > 0 && r.Mutate.ExistingOnPolicyUpdate:
			mut.add(r)
		case r.Type == policy.Validate || r.Type == policy.VerifyImages:
			if p.Background {
				bg.add(r)
			}
		}
	}
	return bg, gen, mut
}
