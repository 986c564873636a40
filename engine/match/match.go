package match

import (
	"fmt"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// Resource is what the matcher needs to know about a request.
type Resource struct {
	// Group, Version and Kind are those of the requested resource at the
	// top level: for pods/exec they are "", "v1", "Pod" (Kyverno resolves
	// the request's resource, not the PodExecOptions object). The core
	// group is "".
	Group, Version, Kind string
	// Subresource is the request's subresource ("status", "exec", "scale",
	// ...); "" for the main resource.
	Subresource string
	// Name and Namespace are metadata.name and metadata.namespace of the
	// object. When Name is empty, names are matched against GenerateName.
	// A Namespace object is in the namespace of its own name for the
	// namespaces filter.
	Name, GenerateName, Namespace string
	// Labels and Annotations are the object's metadata.
	Labels, Annotations map[string]string
	// NamespaceLabels are the labels of the object's namespace, for
	// namespaceSelector.
	NamespaceLabels map[string]string
	// Operation is CREATE, UPDATE, DELETE or CONNECT (Kyverno evaluates
	// background scans as CREATE).
	Operation string
	// Username, Groups, Roles ("namespace:name") and ClusterRoles describe
	// the requester.
	Username     string
	Groups       []string
	Roles        []string
	ClusterRoles []string
	// Background is set when there is no admission request, as in a
	// background scan. The requester fields are then ignored. A Resource
	// whose requester fields are all empty is treated the same way, as
	// Kyverno does for a request without user info (the CLI without
	// --userinfo): user filters (subjects, roles, clusterRoles) of match
	// are not checked, and those of exclude see an empty user.
	Background bool
}

// noRequester reports whether r carries no admission user info.
func (r *Resource) noRequester() bool {
	return r.Background || (r.Username == "" && len(r.Groups) == 0 && len(r.Roles) == 0 && len(r.ClusterRoles) == 0)
}

func (r *Resource) user() user {
	if r.Background {
		return user{}
	}
	return user{name: r.Username, groups: r.Groups, roles: r.Roles, clusterRoles: r.ClusterRoles}
}

// Matcher is a compiled match or exclude block. It is immutable and safe
// for concurrent use.
type Matcher struct {
	mode    blockMode
	filters []filter
}

type blockMode uint8

const (
	modeLegacy blockMode = iota // resources + user info directly under the block
	modeAny
	modeAll
)

// Compile compiles a match or exclude block. path locates the block in the
// policy, e.g. "spec.rules[0].match"; errors carry paths below it.
//
// Compile rejects, with engine.CodeInvalidPolicy, what Kyverno rejects in any
// block: any together with all, any/all together with resources, name
// together with names, kinds "*" with other kinds, an unknown operation, a
// subject without kind or name (or a ServiceAccount without namespace), a
// role not in namespace:name form, a selector without requirements or that
// cannot be built (unless it holds wildcards), and {{ }} variables. Rules
// that depend on where the block is used (match filters need kinds) are
// checked by CompileRule. Every problem is reported, as engine.Errors sorted
// by path. The returned Matcher is usable even with an error; it then does
// what Kyverno would do if it did not validate the policy.
func Compile(m kyverno.MatchResources, path string) (*Matcher, error) {
	var errs engine.Errors
	if m.Any != nil && m.All != nil {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path, "can't specify any and all together"))
	}
	if (len(m.Any) > 0 || len(m.All) > 0) && !resourcesDeepEmpty(m.Resources) {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path+".resources", "can't specify any/all together with resources"))
	}
	mt := &Matcher{}
	add := func(rd *kyverno.ResourceDescription, u *kyverno.UserInfo, p string) {
		f, ferrs := compileFilter(rd, u, p)
		mt.filters = append(mt.filters, f)
		errs = append(errs, ferrs...)
	}
	switch {
	case len(m.Any) > 0:
		mt.mode = modeAny
		for i := range m.Any {
			add(m.Any[i].Resources, &m.Any[i].UserInfo, fmt.Sprintf("%s.any[%d]", path, i))
		}
		// Kyverno ignores all then, but still validates it.
		for i := range m.All {
			_, ferrs := compileFilter(m.All[i].Resources, &m.All[i].UserInfo, fmt.Sprintf("%s.all[%d]", path, i))
			errs = append(errs, ferrs...)
		}
	case len(m.All) > 0:
		mt.mode = modeAll
		for i := range m.All {
			add(m.All[i].Resources, &m.All[i].UserInfo, fmt.Sprintf("%s.all[%d]", path, i))
		}
	default:
		mt.mode = modeLegacy
		add(m.Resources, &m.UserInfo, path)
	}
	if mt.mode != modeLegacy {
		// The legacy fields are ignored next to any/all, but Kyverno still
		// validates the user info.
		errs = append(errs, checkUserInfo(&m.UserInfo, path)...)
	}
	return mt, errs.Err()
}

// resourcesDeepEmpty is reflect.DeepEqual(rd, ResourceDescription{}), the
// test Kyverno uses for "resources given".
func resourcesDeepEmpty(rd *kyverno.ResourceDescription) bool {
	return rd == nil || (rd.Kinds == nil && rd.Name == "" && rd.Names == nil && rd.Namespaces == nil &&
		rd.Annotations == nil && rd.Selector == nil && rd.NamespaceSelector == nil && rd.Operations == nil)
}

// Matches reports whether the block, used as a match block, selects r: one
// filter of any, every filter of all, or the legacy filter. A filter with
// nothing to check (no resources, and no user info or no requester) selects
// nothing. It does not allocate.
func (m *Matcher) Matches(r *Resource) bool {
	if m == nil || r == nil {
		return false
	}
	return m.matches(r, nil)
}

// Excludes reports whether the block, used as an exclude block, excludes r:
// one filter of any, every filter of all, or the legacy filter selects it.
// A filter with nothing to check excludes nothing. It does not allocate.
func (m *Matcher) Excludes(r *Resource) bool {
	if m == nil || r == nil {
		return false
	}
	return m.excludes(r, nil)
}

// matches is Kyverno's match half of MatchesResourceDescription; with why
// not nil it appends Kyverno's reasons when r is not selected.
func (m *Matcher) matches(r *Resource, why *[]string) bool {
	withUser := !r.noRequester()
	u := r.user()
	one := func(f *filter, why *[]string) bool {
		if f.resourcesEmpty && !(f.userSet && withUser) {
			if why != nil {
				*why = append(*why, "match cannot be empty")
			}
			return false
		}
		return f.check(r, &u, withUser, why)
	}
	switch m.mode {
	case modeAny:
		for i := range m.filters {
			if one(&m.filters[i], nil) {
				return true
			}
		}
		if why != nil {
			*why = append(*why, "no resource matched")
		}
		return false
	case modeAll:
		ok := true
		for i := range m.filters {
			if !one(&m.filters[i], why) {
				ok = false
				if why == nil {
					return false
				}
			}
		}
		return ok
	default:
		return one(&m.filters[0], why)
	}
}

// excludes is Kyverno's exclude half of MatchesResourceDescription; with why
// not nil it appends Kyverno's reasons when r is excluded.
func (m *Matcher) excludes(r *Resource, why *[]string) bool {
	u := r.user()
	one := func(f *filter) bool {
		if f.resourcesEmpty && !f.userSet {
			return false
		}
		return f.check(r, &u, true, nil)
	}
	const oneReason = "resource excluded since one of the criteria excluded it"
	switch m.mode {
	case modeAny:
		excluded := false
		for i := range m.filters {
			if one(&m.filters[i]) {
				excluded = true
				if why == nil {
					return true
				}
				*why = append(*why, oneReason) // Kyverno adds one per excluding filter
			}
		}
		return excluded
	case modeAll:
		for i := range m.filters {
			if !one(&m.filters[i]) {
				return false
			}
		}
		if why != nil {
			*why = append(*why, "resource excluded since the combination of all criteria exclude it")
		}
		return true
	default:
		if !one(&m.filters[0]) {
			return false
		}
		if why != nil {
			*why = append(*why, oneReason)
		}
		return true
	}
}
