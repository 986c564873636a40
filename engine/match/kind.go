package match

import (
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// kindSelector is one entry of resources.kinds, split into group, version,
// kind and subresource patterns the way Kyverno's ParseKindSelector does:
//
//	Pod                      any group, any version, kind Pod, main resource
//	v1/Pod, */Pod            version v1 (or any), kind Pod
//	apps/v1/Deployment       group apps, version v1
//	apps/*/Deployment        group apps, any version
//	Pod/exec, Pod.exec       kind Pod, subresource exec
//	v1/Pod/status            version v1, kind Pod, subresource status
//	apps/v1/Deployment/scale group, version, kind, subresource
//	*/status                 any kind, subresource status
//	*/*                      everything, subresources included
//	*                        every kind, main resources only
//
// After splitting on "/", the last part is split again on ".", so
// "Deployment.scale" is "Deployment/scale". A first part that is "*" or looks
// like a version (v1, v2beta1: one digit, Kyverno's regexp) is a version.
// More than four parts give empty patterns, which match nothing real.
type kindSelector struct {
	group, version, kind, sub pattern
}

// Kind is a resource selector of a policy in text form: an entry of
// resources.kinds split as Kyverno's ParseKindSelector does (Group,
// Version, Kind and Subresource are patterns, "*" for any; "Pod" is group
// "*", version "*", kind "Pod", the main resource), or, with Resource set
// and Kind empty, a plural resource of a ValidatingPolicy's resourceRules
// (Group "" is then the core group).
type Kind struct {
	Group, Version, Kind, Resource, Subresource string
}

// ParseKind splits an entry of resources.kinds as match blocks do.
func ParseKind(s string) Kind {
	g, v, k, sub := splitKindSelector(s)
	return Kind{Group: g, Version: v, Kind: k, Subresource: sub}
}

// MainResource reports whether k selects main resources (no subresource,
// or every subresource and the main resource: "*").
func (k Kind) MainResource() bool { return k.Subresource == "" || k.Subresource == "*" }

func parseKindSelector(s string) kindSelector {
	g, v, k, sub := splitKindSelector(s)
	return kindSelector{
		group:   compilePattern(g),
		version: compilePattern(v),
		kind:    compilePattern(k),
		sub:     compilePattern(sub),
	}
}

// splitKindSelector is Kyverno's ParseKindSelector.
func splitKindSelector(s string) (group, version, kind, subresource string) {
	parts := strings.Split(s, "/")
	last := parts[len(parts)-1]
	parts = append(parts[:len(parts)-1], strings.Split(last, ".")...)
	var g, v, k, sub string
	switch len(parts) {
	case 1:
		g, v, k = "*", "*", parts[0]
	case 2:
		switch {
		case parts[0] == "*" && parts[1] == "*":
			g, v, k, sub = "*", "*", "*", "*"
		case parts[0] == "*" && strings.ToLower(parts[1]) == parts[1]:
			g, v, k, sub = "*", "*", "*", parts[1]
		case kyverno.IsKindVersion(parts[0]):
			g, v, k = "*", parts[0], parts[1]
		default:
			g, v, k, sub = "*", "*", parts[0], parts[1]
		}
	case 3:
		if kyverno.IsKindVersion(parts[0]) {
			g, v, k, sub = "*", parts[0], parts[1], parts[2]
		} else {
			g, v, k = parts[0], parts[1], parts[2]
		}
	case 4:
		g, v, k, sub = parts[0], parts[1], parts[2], parts[3]
	}
	return g, v, k, sub
}

// matches is Kyverno's CheckKind for one selector, with ephemeral containers
// allowed: a selector that matches core/v1 Pod also matches its
// ephemeralcontainers subresource, as rules always do for backward
// compatibility.
func (k *kindSelector) matches(r *Resource) bool {
	if !k.group.Match(r.Group) || !k.version.Match(r.Version) || !k.kind.Match(r.Kind) {
		return false
	}
	if k.sub.Match(r.Subresource) {
		return true
	}
	return r.Subresource == "ephemeralcontainers" && r.Group == "" && r.Version == "v1" && r.Kind == "Pod"
}
