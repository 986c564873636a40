package policy

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/engine/podsecurity"
)

// Exception is a compiled PolicyException. It is immutable and safe for
// concurrent use.
type Exception struct {
	name, namespace string
	// Background is spec.background (default true): whether the exception
	// applies in background scans.
	Background bool
	refs       []kyverno.ExceptionRef
	// match selects resources; matchNoNS is the same block without
	// namespaceSelector, for Namespaces and kindless resources, which
	// Kyverno does not test against it.
	match, matchNoNS *match.Matcher
	// Conditions is spec.conditions (nil when unset).
	Conditions *Conditions
	// PodSecurity are the controls exempted in podSecurity rules; an
	// exception without them exempts whole rules.
	PodSecurity []podsecurity.Exclude
}

// Name is metadata.name.
func (e *Exception) Name() string { return e.name }

// Namespace is metadata.namespace.
func (e *Exception) Namespace() string { return e.namespace }

// Key is "namespace/name" ("name" without a namespace), as Kyverno names
// the exception in its messages.
func (e *Exception) Key() string {
	if e.namespace == "" {
		return e.name
	}
	return e.namespace + "/" + e.name
}

// Covers reports whether the exception lists the rule of the policy: the
// policy by name ("name" for a ClusterPolicy, "namespace/name" for a
// Policy), the rule by a name that may hold wildcards. Autogen rules are
// covered only by their own names (autogen-<rule>, or a wildcard).
func (e *Exception) Covers(p *Policy, rule string) bool {
	key := p.Name()
	if ns := p.Document().Metadata.Namespace; ns != "" {
		key = ns + "/" + key
	}
	for _, ref := range e.refs {
		if ref.PolicyName != key {
			continue
		}
		if match.AnyWildcard(ref.RuleNames, rule) {
			return true
		}
	}
	return false
}

// Matches reports whether the exception's match block selects the
// resource, as Kyverno's checkMatchesResources does: a filter must have
// something to check; operations are not checked; user filters are
// checked against the requester (none in background scans); the
// namespaceSelector is not checked for Namespaces. Conditions are the
// caller's to evaluate.
func (e *Exception) Matches(res *match.Resource) bool {
	if res.Kind == "Namespace" || res.Kind == "" {
		return e.matchNoNS.Excludes(res)
	}
	return e.match.Excludes(res)
}

// CompileException checks a PolicyException and compiles it. As Kyverno's
// validation does, it rejects an exception without policy names, user
// filters in an exception that applies to background scans, and invalid
// podSecurity exclusions.
func CompileException(doc *kyverno.PolicyException) (*Exception, error) {
	c := &compiler{}
	e := &Exception{
		name:        doc.Metadata.Name,
		namespace:   doc.Metadata.Namespace,
		Background:  boolOr(doc.Spec.Background, true),
		refs:        doc.Spec.Exceptions,
		PodSecurity: doc.Spec.PodSecurity,
	}
	if e.name == "" {
		c.errorf(engine.CodeInvalidPolicy, "metadata.name", "an exception needs a name")
	}
	for i, ref := range doc.Spec.Exceptions {
		if ref.PolicyName == "" {
			c.errorf(engine.CodeInvalidPolicy, fmt.Sprintf("spec.exceptions[%d].policyName", i), "An exception requires a policy name")
		}
	}
	m := kyverno.MatchResources{Any: withoutOperations(doc.Spec.Match.Any), All: withoutOperations(doc.Spec.Match.All)}
	var err error
	e.match, err = match.Compile(m, "spec.match")
	c.add(err, engine.CodeInvalidPolicy, "spec.match")
	noNS := kyverno.MatchResources{Any: withoutNamespaceSelector(m.Any), All: withoutNamespaceSelector(m.All)}
	e.matchNoNS, _ = match.Compile(noNS, "spec.match")
	if e.Background {
		for i, f := range doc.Spec.Match.Any {
			c.noUserInfo(&f.UserInfo, fmt.Sprintf("spec.match.any[%d]", i))
		}
		for i, f := range doc.Spec.Match.All {
			c.noUserInfo(&f.UserInfo, fmt.Sprintf("spec.match.all[%d]", i))
		}
	}
	if doc.Spec.Conditions != nil {
		e.Conditions = c.anyAll(doc.Spec.Conditions, "spec.conditions")
	}
	c.errs = append(c.errs, podsecurity.ValidateExclusions("", doc.Spec.PodSecurity, "spec.podSecurity")...)
	if err := c.errs.Err(); err != nil {
		return nil, fmt.Errorf("compile PolicyException %q: %w", doc.Metadata.Name, err)
	}
	return e, nil
}

func (c *compiler) noUserInfo(u *kyverno.UserInfo, path string) {
	if len(u.Roles) > 0 || len(u.ClusterRoles) > 0 || len(u.Subjects) > 0 {
		c.errorf(engine.CodeBackgroundUserInfo, path, "user information (roles, clusterRoles, subjects) is not allowed when background processing is enabled")
	}
}

// withoutOperations copies the filters without their operations.
func withoutOperations(in []kyverno.ResourceFilter) []kyverno.ResourceFilter {
	return editResources(in, func(rd *kyverno.ResourceDescription) { rd.Operations = nil })
}

// withoutNamespaceSelector copies the filters without their namespace
// selectors.
func withoutNamespaceSelector(in []kyverno.ResourceFilter) []kyverno.ResourceFilter {
	return editResources(in, func(rd *kyverno.ResourceDescription) { rd.NamespaceSelector = nil })
}

// editResources copies the filters, each with a copy of its resources
// changed by edit.
func editResources(in []kyverno.ResourceFilter, edit func(*kyverno.ResourceDescription)) []kyverno.ResourceFilter {
	if in == nil {
		return nil
	}
	out := make([]kyverno.ResourceFilter, len(in))
	for i, f := range in {
		out[i] = f
		if f.Resources != nil {
			rd := *f.Resources
			edit(&rd)
			out[i].Resources = &rd
		}
	}
	return out
}
