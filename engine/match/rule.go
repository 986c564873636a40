package match

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

// Rule is the compiled match and exclude of one rule. It is immutable and
// safe for concurrent use.
type Rule struct {
	name      string
	namespace string
	match     *Matcher
	exclude   *Matcher // nil without exclude
}

// RuleOptions tell CompileRule about the policy around the rule.
type RuleOptions struct {
	// PolicyNamespace is the namespace of a namespaced Policy, "" for a
	// ClusterPolicy. The rule then applies only to resources of that
	// namespace, and may not filter by namespaces.
	PolicyNamespace string
	// Background is the policy's effective spec.background (Kyverno's
	// default is true): kinds "*" are not allowed then.
	Background bool
}

// CompileRule compiles the match and exclude blocks of a rule. path locates
// the rule, e.g. "spec.rules[0]".
//
// Besides what Compile rejects in each block, it rejects what Kyverno
// rejects for the rule as a whole: a match filter without resources or
// without kinds, kinds "*" in a background policy, namespaces in a
// namespaced policy, and an exclude that removes everything the match
// selects ("Rule is matching an empty set", Kyverno's
// ValidateMatchExcludeConflict).
func CompileRule(rule *kyverno.Rule, path string, opts RuleOptions) (*Rule, error) {
	var errs engine.Errors
	add := func(err error) { errs = append(errs, engine.As(err)...) }

	r := &Rule{name: rule.Name, namespace: opts.PolicyNamespace}
	var err error
	r.match, err = Compile(rule.Match, path+".match")
	add(err)
	if rule.Exclude != nil {
		r.exclude, err = Compile(*rule.Exclude, path+".exclude")
		add(err)
	}

	errs = append(errs, checkMatchKinds(&rule.Match, path+".match")...)
	policyChecks := func(m *kyverno.MatchResources, path string) {
		forEachDescription(m, path, func(rd *kyverno.ResourceDescription, p string) {
			if opts.Background && contains(rd.Kinds, "*") {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".kinds",
					"wildcard policy not allowed in background mode. Set spec.background=false to disable background mode for this policy rule"))
			}
			if opts.PolicyNamespace != "" && len(rd.Namespaces) > 0 {
				errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".namespaces", "filtering namespaces not allowed in namespaced policies"))
			}
		})
	}
	policyChecks(&rule.Match, path+".match")
	if rule.Exclude != nil {
		policyChecks(rule.Exclude, path+".exclude")
	}
	if matchesEmptySet(&rule.Match, rule.Exclude) {
		errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path, "Rule is matching an empty set"))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// NewRule builds a Rule from blocks compiled with Compile, without the
// rule-level checks of CompileRule. exclude may be nil.
func NewRule(name string, match, exclude *Matcher, policyNamespace string) *Rule {
	return &Rule{name: name, namespace: policyNamespace, match: match, exclude: exclude}
}

// Match returns the compiled match block.
func (r *Rule) Match() *Matcher { return r.match }

// Exclude returns the compiled exclude block, nil when the rule has none.
func (r *Rule) Exclude() *Matcher { return r.exclude }

// checkMatchKinds is Kyverno's check that every match filter selects
// resources by kind: Kyverno rejects a match filter without kinds (only
// exclude filters may go without).
func checkMatchKinds(m *kyverno.MatchResources, path string) engine.Errors {
	var errs engine.Errors
	check := func(rd *kyverno.ResourceDescription, p string) {
		switch {
		case resourcesDeepEmpty(rd):
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p, "match resources not specified"))
		case len(rd.Kinds) == 0:
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, p+".kinds",
				"at least one element must be specified in a kind block, the kind attribute is mandatory when working with the resources element"))
		}
	}
	switch {
	case len(m.Any) > 0:
		for i := range m.Any {
			check(m.Any[i].Resources, fmt.Sprintf("%s.any[%d].resources", path, i))
		}
	case len(m.All) > 0:
		for i := range m.All {
			check(m.All[i].Resources, fmt.Sprintf("%s.all[%d].resources", path, i))
		}
	default:
		check(m.Resources, path+".resources")
	}
	return errs
}

// forEachDescription calls fn for every resource description of a block
// that is not nil, with its path.
func forEachDescription(m *kyverno.MatchResources, path string, fn func(rd *kyverno.ResourceDescription, path string)) {
	for i := range m.Any {
		if rd := m.Any[i].Resources; rd != nil {
			fn(rd, fmt.Sprintf("%s.any[%d].resources", path, i))
		}
	}
	for i := range m.All {
		if rd := m.All[i].Resources; rd != nil {
			fn(rd, fmt.Sprintf("%s.all[%d].resources", path, i))
		}
	}
	if m.Resources != nil {
		fn(m.Resources, path+".resources")
	}
}

// Applies reports whether the rule applies to res: the policy namespace (if
// any) is res's, the match block selects it and the exclude block (if any)
// does not exclude it. It does not allocate.
func (r *Rule) Applies(res *Resource) bool {
	if r == nil || res == nil {
		return false
	}
	if r.namespace != "" && r.namespace != res.Namespace {
		return false
	}
	return r.match.matches(res, nil) && (r.exclude == nil || !r.exclude.excludes(res, nil))
}

// Explain says why the rule does not apply to res, in Kyverno's words; nil
// when it applies. Explain(res) == nil exactly when Applies(res).
func (r *Rule) Explain(res *Resource) *Mismatch {
	if r == nil {
		return &Mismatch{Message: "no rule"}
	}
	if res == nil {
		return &Mismatch{Rule: r.name, Message: "resource is empty"}
	}
	if r.namespace != "" && r.namespace != res.Namespace {
		return &Mismatch{Rule: r.name, Message: "policy and resource namespaces mismatch"}
	}
	var why []string
	if r.match.matches(res, &why) && r.exclude != nil {
		r.exclude.excludes(res, &why)
	}
	if len(why) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("rule " + r.name + " not matched:")
	for i, reason := range why {
		b.WriteString("\n " + strconv.Itoa(i+1) + ". " + reason)
	}
	return &Mismatch{Rule: r.name, Reasons: why, Message: b.String()}
}

// Mismatch says why a rule does not apply to a resource.
type Mismatch struct {
	// Rule is the rule name.
	Rule string
	// Reasons are Kyverno's reasons, in its order: "kind does not match
	// [Pod]", "no resource matched", "resource excluded since one of the
	// criteria excluded it", ...
	Reasons []string
	// Message is Kyverno's full message: "rule NAME not matched:\n 1. ...",
	// or "policy and resource namespaces mismatch".
	Message string
}

func (m *Mismatch) String() string { return m.Message }

// matchesEmptySet is Kyverno's ValidateMatchExcludeConflict: it reports an
// exclude that surely removes everything the match selects. It compares the
// any lists entry by entry, and otherwise only the legacy fields, so a
// legacy match next to an exclude with any (whose legacy fields are empty)
// is reported too, as Kyverno does.
func matchesEmptySet(m, ex *kyverno.MatchResources) bool {
	if ex == nil || len(ex.All) > 0 || len(m.All) > 0 {
		return false
	}
	if len(m.Any) > 0 && len(ex.Any) > 0 {
		for i := range m.Any {
			for j := range ex.Any {
				if filtersDeepEqual(&m.Any[i], &ex.Any[j]) {
					return true
				}
			}
		}
		return false
	}
	if ex.Any == nil && ex.All == nil && userDeepEmpty(&ex.UserInfo) && resourcesDeepEmpty(ex.Resources) {
		return false
	}
	mrd, erd := descriptionOf(m.Resources), descriptionOf(ex.Resources)
	if len(ex.Roles) > 0 && (len(m.Roles) == 0 || !allIn(m.Roles, ex.Roles)) {
		return false
	}
	if len(ex.ClusterRoles) > 0 && (len(m.ClusterRoles) == 0 || !allIn(m.ClusterRoles, ex.ClusterRoles)) {
		return false
	}
	if len(ex.Subjects) > 0 {
		if len(m.Subjects) == 0 {
			return false
		}
		for _, s := range m.Subjects {
			if !containsSubject(ex.Subjects, s) {
				return false
			}
		}
	}
	if erd.Name != "" && !wildcardMatch(erd.Name, mrd.Name) {
		return false
	}
	if len(erd.Names) > 0 {
		for _, mn := range mrd.Names {
			for _, en := range erd.Names {
				if wildcardMatch(en, mn) {
					return true
				}
			}
		}
		return false
	}
	if len(erd.Namespaces) > 0 && (len(mrd.Namespaces) == 0 || !allIn(mrd.Namespaces, erd.Namespaces)) {
		return false
	}
	if len(erd.Kinds) > 0 && (len(mrd.Kinds) == 0 || !allIn(mrd.Kinds, erd.Kinds)) {
		return false
	}
	if !selectorCovered(mrd.Selector, erd.Selector) || !selectorCovered(mrd.NamespaceSelector, erd.NamespaceSelector) {
		return false
	}
	if (mrd.Annotations == nil) != (erd.Annotations == nil) {
		return false
	}
	if mrd.Annotations != nil && !reflect.DeepEqual(mrd.Annotations, erd.Annotations) {
		return false
	}
	return true
}

// selectorCovered is the selector part of ValidateMatchExcludeConflict:
// both or neither are set, every match expression is an exclude
// expression, and the exclude labels agree with every match label.
func selectorCovered(ms, es *kyverno.LabelSelector) bool {
	if ms == nil || es == nil {
		return ms == nil && es == nil
	}
	if len(es.MatchExpressions) > 0 {
		if len(ms.MatchExpressions) == 0 {
			return false
		}
		for _, me := range ms.MatchExpressions {
			found := false
			for _, ee := range es.MatchExpressions {
				if me.Key == ee.Key && me.Operator == ee.Operator && slices.Equal(me.Values, ee.Values) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	if len(es.MatchLabels) > 0 {
		if len(ms.MatchLabels) == 0 {
			return false
		}
		for k, v := range ms.MatchLabels {
			if es.MatchLabels[k] != v {
				return false
			}
		}
	}
	return true
}

func descriptionOf(rd *kyverno.ResourceDescription) *kyverno.ResourceDescription {
	if rd == nil {
		return &kyverno.ResourceDescription{}
	}
	return rd
}

func userDeepEmpty(u *kyverno.UserInfo) bool {
	return u.Roles == nil && u.ClusterRoles == nil && u.Subjects == nil
}

// filtersDeepEqual is reflect.DeepEqual on Kyverno's ResourceFilter, whose
// resources are a value: absent resources equal empty ones.
func filtersDeepEqual(a, b *kyverno.ResourceFilter) bool {
	return reflect.DeepEqual(a.UserInfo, b.UserInfo) && reflect.DeepEqual(*descriptionOf(a.Resources), *descriptionOf(b.Resources))
}

// allIn reports whether every element of list is in set.
func allIn(list, set []string) bool {
	for _, s := range list {
		if !contains(set, s) {
			return false
		}
	}
	return true
}

func containsSubject(list []kyverno.Subject, s kyverno.Subject) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
