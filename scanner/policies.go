package scanner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Kind selects resources by API group, version and kind, as a policy's
// match block names them ("Pod" is group "*", version "*", kind Pod;
// "apps/v1/Deployment"), or by API group, version and resource, as the
// matchConstraints of a ValidatingPolicy name them (Resource set, Kind
// empty). "*" is any group, version, kind or resource; the group "" is the
// core group. The decision server computes them from its compiled
// policies (PolicyInfo's scan scopes).
type Kind struct {
	Group, Version, Kind string
	// Resource is the plural resource name ("pods", "*") of a selector of
	// a ValidatingPolicy's resourceRules.
	Resource string
}

// String is the selector as written in a policy: "Kind", "version/Kind"
// or "group/version/Kind"; "group/version/resource" for a resource
// selector (the core group as "core").
func (k Kind) String() string {
	if k.Resource != "" {
		g := k.Group
		if g == "" {
			g = "core"
		}
		return g + "/" + k.Version + "/" + k.Resource
	}
	switch {
	case k.Group != "*":
		return k.Group + "/" + k.Version + "/" + k.Kind
	case k.Version != "*":
		return k.Version + "/" + k.Kind
	}
	return k.Kind
}

// wildcard reports whether k selects every kind or resource, which a
// cluster scan cannot list.
func (k Kind) wildcard() bool { return k.Kind == "*" || k.Resource == "*" }

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
	if k.Version != "*" && k.Version != version {
		return false
	}
	if k.Group != "*" && k.Group != group {
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
				if k.wildcard() || seen[k] {
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

// LoadPolicies reads the server's policies (ListPolicies) and what
// their background work selects: the server computes it from the
// compiled policies (PolicyInfo's scan scopes), so the scanner compiles
// nothing. Policies that are not ready are left out.
func LoadPolicies(ctx context.Context, c *client.Client) (*PolicySet, error) {
	list, err := c.ListPolicies(ctx)
	if err != nil {
		return nil, fmt.Errorf("list policies: %w", err)
	}
	set := &PolicySet{Versions: map[string]string{}}
	for _, info := range list.GetPolicies() {
		if !info.GetReady() || !scannedKinds[info.GetKind()] {
			continue
		}
		ref := PolicyRef{Kind: info.GetKind(), Namespace: info.GetNamespace(), Name: info.GetName(), Hash: info.GetContentHash()}
		set.Versions[ref.Key()] = ref.Hash
		wildcard := false
		for _, sc := range []struct {
			scope *verdictv1.ScanScope
			list  *[]*PolicyRef
		}{
			{info.GetBackgroundScan(), &set.Background},
			{info.GetGenerateExisting(), &set.GenerateExisting},
			{info.GetMutateExisting(), &set.MutateExisting},
		} {
			p := ref
			p.Rules = sc.scope.GetRules()
			for _, r := range sc.scope.GetResources() {
				k := Kind{Group: r.GetGroup(), Version: r.GetVersion(), Kind: r.GetKind(), Resource: r.GetResource()}
				wildcard = wildcard || k.wildcard()
				p.Kinds = append(p.Kinds, k)
			}
			if len(p.Kinds) > 0 {
				*sc.list = append(*sc.list, &p)
			}
		}
		if wildcard {
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
