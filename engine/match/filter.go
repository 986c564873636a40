package match

import (
	"fmt"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// filter is one compiled resource filter: an entry of any/all, or the
// legacy resources + user info written directly under match/exclude.
type filter struct {
	// resourcesEmpty is Kyverno's ResourceDescription.IsEmpty; userSet says
	// the user info is not the zero value. Kyverno compares user info with
	// reflect.DeepEqual, so an explicit empty list (roles: []) counts as set.
	resourcesEmpty bool
	userSet        bool

	operations []string
	kinds      []kindSelector
	kindsText  string // "kind does not match [Pod Deployment]"
	kindsStar  bool   // kinds holds "*" itself
	hasName    bool
	name       pattern
	names      []pattern
	namespaces []pattern
	annots     []pairPattern
	selector   *Selector
	nsSelector *Selector

	roles        []string
	clusterRoles []string
	subjects     []subjectPattern
}

type subjectPattern struct {
	kind    subjectKind
	pattern pattern // on the username for User and ServiceAccount, on each group for Group
}

type subjectKind uint8

const (
	subjectUser subjectKind = iota
	subjectGroup
	subjectServiceAccount
)

var validOperations = map[string]bool{"CREATE": true, "UPDATE": true, "DELETE": true, "CONNECT": true}

// compileFilter compiles one filter. path is the path of the filter itself
// (e.g. "spec.rules[0].match.any[1]", or the block's path for the legacy
// form); the resource description lives at path+".resources".
func compileFilter(rd *kyverno.ResourceDescription, u *kyverno.UserInfo, path string) (filter, engine.Errors) {
	var errs engine.Errors
	f := filter{
		userSet:      u.Roles != nil || u.ClusterRoles != nil || u.Subjects != nil,
		roles:        u.Roles,
		clusterRoles: u.ClusterRoles,
	}
	errs = append(errs, checkUserInfo(u, path)...)
	for _, s := range u.Subjects {
		sp := subjectPattern{pattern: compilePattern(s.Name)}
		switch s.Kind {
		case "Group":
			sp.kind = subjectGroup
		case "ServiceAccount":
			sp.kind = subjectServiceAccount
			sp.pattern = compilePattern("system:serviceaccount:" + s.Namespace + ":" + s.Name)
		default: // "User"; other kinds are rejected by checkUserInfo
			sp.kind = subjectUser
		}
		f.subjects = append(f.subjects, sp)
	}

	if rd == nil {
		rd = &kyverno.ResourceDescription{}
	}
	rp := path + ".resources"
	f.resourcesEmpty = len(rd.Kinds) == 0 && rd.Name == "" && len(rd.Names) == 0 && len(rd.Namespaces) == 0 &&
		len(rd.Annotations) == 0 && rd.Selector == nil && rd.NamespaceSelector == nil && len(rd.Operations) == 0
	errs = append(errs, forbidVariables(rd, rp)...)

	for i, op := range rd.Operations {
		if !validOperations[op] {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, fmt.Sprintf("%s.operations[%d]", rp, i),
				fmt.Sprintf("unsupported operation %q (want CREATE, UPDATE, DELETE or CONNECT)", op)))
		}
	}
	f.operations = rd.Operations

	for _, k := range rd.Kinds {
		f.kinds = append(f.kinds, parseKindSelector(k))
		if k == "*" {
			f.kindsStar = true
		}
	}
	if f.kindsStar && len(rd.Kinds) > 1 {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, rp+".kinds", "wildcard policy can not deal with more than one kind"))
	}
	f.kindsText = fmt.Sprintf("kind does not match %v", rd.Kinds)

	if rd.Name != "" && rd.Names != nil {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, rp, "name and names can not be specified together"))
	}
	if rd.Name != "" {
		f.hasName, f.name = true, compilePattern(rd.Name)
	}
	f.names = compilePatterns(rd.Names)
	f.namespaces = compilePatterns(rd.Namespaces)

	keys := make([]string, 0, len(rd.Annotations))
	for k := range rd.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.annots = append(f.annots, pairPattern{key: compilePattern(k), value: compilePattern(rd.Annotations[k])})
	}

	if rd.Selector != nil {
		sel, serrs := compileSelector(rd.Selector, rp+".selector")
		// Kyverno validates a selector only when its matchLabels hold no
		// wildcard; a wildcard selector that cannot be built never matches.
		switch {
		case len(sel.wild) > 0:
			errs = append(errs, schemaErrors(rd.Selector, rp+".selector")...)
		case sel.requirements == 0:
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, rp+".selector", "the requirements are not specified in selector"))
		default:
			errs = append(errs, serrs...)
		}
		f.selector = sel
	}
	if rd.NamespaceSelector != nil {
		// Kyverno does not validate namespaceSelector beyond its schema: one
		// that cannot be built never matches.
		f.nsSelector, _ = compileSelector(rd.NamespaceSelector, rp+".namespaceSelector")
		errs = append(errs, schemaErrors(rd.NamespaceSelector, rp+".namespaceSelector")...)
	}
	return f, errs
}

// schemaErrors are the selector checks of the CRD schema: matchExpressions
// need a key and an operator.
func schemaErrors(s *kyverno.LabelSelector, path string) engine.Errors {
	var errs engine.Errors
	for i, e := range s.MatchExpressions {
		p := fmt.Sprintf("%s.matchExpressions[%d]", path, i)
		if e.Key == "" {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".key", "key is required"))
		}
		if e.Operator == "" {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".operator", "operator is required"))
		}
	}
	return errs
}

// checkUserInfo is Kyverno's UserInfo.Validate plus the schema of subjects.
func checkUserInfo(u *kyverno.UserInfo, path string) engine.Errors {
	var errs engine.Errors
	for i, s := range u.Subjects {
		p := fmt.Sprintf("%s.subjects[%d]", path, i)
		switch s.Kind {
		case "":
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".kind", "kind is required"))
		case "User", "Group", "ServiceAccount":
		default:
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".kind", fmt.Sprintf("kind %q must be 'User', 'Group', or 'ServiceAccount'", s.Kind)))
		}
		if s.Name == "" {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".name", "name is required"))
		}
		if s.Kind == "ServiceAccount" && s.Namespace == "" {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".namespace", "namespace is required when kind is ServiceAccount"))
		}
		errs = append(errs, forbidVariablesIn(p, s.Kind, s.Name, s.Namespace, s.APIGroup)...)
	}
	for i, r := range u.Roles {
		p := fmt.Sprintf("%s.roles[%d]", path, i)
		if strings.Count(r, ":") != 1 {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p, fmt.Sprintf("role %q is expected to be in namespace:name format", r)))
		}
		errs = append(errs, forbidVariablesIn(p, r)...)
	}
	for i, r := range u.ClusterRoles {
		errs = append(errs, forbidVariablesIn(fmt.Sprintf("%s.clusterRoles[%d]", path, i), r)...)
	}
	return errs
}

// forbidVariables rejects {{ }} variables anywhere in a resource
// description: Kyverno does not substitute variables in match and exclude,
// and rejects policies that have some there.
func forbidVariables(rd *kyverno.ResourceDescription, path string) engine.Errors {
	var errs engine.Errors
	list := func(field string, ss []string) {
		for i, s := range ss {
			errs = append(errs, forbidVariablesIn(fmt.Sprintf("%s.%s[%d]", path, field, i), s)...)
		}
	}
	kv := func(field string, m map[string]string) {
		for k, v := range m {
			errs = append(errs, forbidVariablesIn(path+"."+field+"."+k, k, v)...)
		}
	}
	sel := func(field string, s *kyverno.LabelSelector) {
		if s == nil {
			return
		}
		kv(field+".matchLabels", s.MatchLabels)
		for i, e := range s.MatchExpressions {
			p := fmt.Sprintf("%s.%s.matchExpressions[%d]", path, field, i)
			errs = append(errs, forbidVariablesIn(p, append([]string{e.Key, e.Operator}, e.Values...)...)...)
		}
	}
	list("kinds", rd.Kinds)
	errs = append(errs, forbidVariablesIn(path+".name", rd.Name)...)
	list("names", rd.Names)
	list("namespaces", rd.Namespaces)
	list("operations", rd.Operations)
	kv("annotations", rd.Annotations)
	sel("selector", rd.Selector)
	sel("namespaceSelector", rd.NamespaceSelector)
	return errs
}

func forbidVariablesIn(path string, ss ...string) engine.Errors {
	for _, s := range ss {
		if hasVariable(s) {
			return engine.Errors{engine.Errorf(engine.CodeInvalidPolicy, path, fmt.Sprintf("variables are not allowed in match and exclude: %q", s))}
		}
	}
	return nil
}

// hasVariable finds what Kyverno's `\{\{[^{}]*\}\}` finds: "{{", then no
// brace, then "}}".
func hasVariable(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '{' || s[i+1] != '{' {
			continue
		}
		j := i + 2
		for j < len(s) && s[j] != '{' && s[j] != '}' {
			j++
		}
		if j+1 < len(s) && s[j] == '}' && s[j+1] == '}' {
			return true
		}
	}
	return false
}

// user is the requester as the filters see it.
type user struct {
	name         string
	groups       []string
	roles        []string
	clusterRoles []string
}

// check reports whether r passes every condition of the filter, in the
// order of Kyverno's doesResourceMatchConditionBlock. withUser false skips
// the user conditions. With why nil it stops at the first failure;
// otherwise it appends Kyverno's reason for every failed condition.
func (f *filter) check(r *Resource, u *user, withUser bool, why *[]string) bool {
	if len(f.operations) > 0 && !contains(f.operations, r.Operation) {
		if why != nil {
			*why = append(*why, "operation does not match")
		}
		return false // Kyverno reports nothing else then
	}
	ok := true
	fail := func(reason string) bool {
		ok = false
		if why != nil {
			*why = append(*why, reason)
			return false
		}
		return true
	}
	if len(f.kinds) > 0 && !f.kindMatches(r) && fail(f.kindsText) {
		return false
	}
	name := r.Name
	if name == "" {
		name = r.GenerateName
	}
	if f.hasName && !f.name.Match(name) && fail("name does not match") {
		return false
	}
	if len(f.names) > 0 && !matchAny(f.names, name) && fail("none of the names match") {
		return false
	}
	if len(f.namespaces) > 0 {
		ns := r.Namespace
		if r.Kind == "Namespace" {
			ns = r.Name
		}
		if !matchAny(f.namespaces, ns) && fail("namespace does not match") {
			return false
		}
	}
	if len(f.annots) > 0 && !f.annotationsMatch(r.Annotations) && fail("annotations does not match") {
		return false
	}
	if f.selector != nil {
		if f.selector.err != nil {
			if fail("failed to parse selector: " + f.selector.err.Message) {
				return false
			}
		} else if !f.selector.Matches(r.Labels) && fail("selector does not match") {
			return false
		}
	}
	if f.nsSelector != nil {
		switch {
		case r.Kind == "Namespace":
			if fail("namespace selector is not applicable for namespace resource") {
				return false
			}
		case r.Kind != "" || f.kindsStar:
			if f.nsSelector.err != nil {
				if fail("failed to parse namespace selector: " + f.nsSelector.err.Message) {
					return false
				}
			} else if !f.nsSelector.Matches(r.NamespaceLabels) && fail("namespace selector does not match labels") {
				return false
			}
		}
	}
	if !withUser {
		return ok
	}
	if len(f.roles) > 0 && !containsAny(f.roles, u.roles) && fail("user info does not match roles for the given conditionBlock") {
		return false
	}
	if len(f.clusterRoles) > 0 && !containsAny(f.clusterRoles, u.clusterRoles) && fail("user info does not match clustersRoles for the given conditionBlock") {
		return false
	}
	if len(f.subjects) > 0 && !f.subjectMatches(u) && fail("user info does not match subject for the given conditionBlock") {
		return false
	}
	return ok
}

func (f *filter) kindMatches(r *Resource) bool {
	for i := range f.kinds {
		if f.kinds[i].matches(r) {
			return true
		}
	}
	return false
}

func (f *filter) annotationsMatch(annotations map[string]string) bool {
	for i := range f.annots {
		if !f.annots[i].matchIn(annotations) {
			return false
		}
	}
	return true
}

func (f *filter) subjectMatches(u *user) bool {
	for i := range f.subjects {
		s := &f.subjects[i]
		switch s.kind {
		case subjectGroup:
			for _, g := range u.groups {
				if s.pattern.Match(g) {
					return true
				}
			}
		default:
			if s.pattern.Match(u.name) {
				return true
			}
		}
	}
	return false
}

func containsAny(list, values []string) bool {
	for _, v := range values {
		if contains(list, v) {
			return true
		}
	}
	return false
}
