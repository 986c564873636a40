package vpol

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// matcher is a compiled spec.matchConstraints, matched as Kyverno's
// pkg/cel/matching does (Kubernetes' rule, namespace and object
// predicates, without conversion between versions: matchPolicy
// Equivalent matches as Exact, as in Kyverno).
type matcher struct {
	constraints *admissionregistrationv1.MatchResources
	// The selectors; a selector that does not parse is an error reported
	// when the resource rules match (Kyverno's order).
	nsSelector, objSelector labels.Selector
	nsErr, objErr           error
}

func compileMatcher(mc *admissionregistrationv1.MatchResources) *matcher {
	if mc == nil {
		return nil
	}
	m := &matcher{constraints: mc, nsSelector: labels.Everything(), objSelector: labels.Everything()}
	if mc.NamespaceSelector != nil {
		m.nsSelector, m.nsErr = metav1.LabelSelectorAsSelector(mc.NamespaceSelector)
	}
	if mc.ObjectSelector != nil {
		m.objSelector, m.objErr = metav1.LabelSelectorAsSelector(mc.ObjectSelector)
	}
	return m
}

// matches reports whether the request is one the constraints select. A
// policy without matchConstraints (nil) matches nothing.
func (m *matcher) matches(in *Input) (bool, error) {
	if m == nil {
		return false, nil
	}
	nsMatch, nsErr := m.namespaceMatches(in)
	if !nsMatch && nsErr == nil {
		return false, nil
	}
	objMatch, objErr := m.objectMatches(in)
	if !objMatch && objErr == nil {
		return false, nil
	}
	if rulesMatch(m.constraints.ExcludeResourceRules, in) {
		return false, nil
	}
	if len(m.constraints.ResourceRules) > 0 && !rulesMatch(m.constraints.ResourceRules, in) {
		return false, nil
	}
	if nsErr != nil {
		return false, nsErr
	}
	if objErr != nil {
		return false, objErr
	}
	return true, nil
}

// namespaceMatches is Kubernetes' MatchNamespaceSelector with Kyverno's
// CLI namespaces.
func (m *matcher) namespaceMatches(in *Input) (bool, error) {
	if in.namespace == "" && in.resource != "namespaces" {
		// Cluster-scoped resources are never exempted.
		return true, nil
	}
	if m.nsErr != nil {
		return false, internalError(m.nsErr)
	}
	if m.nsSelector.Empty() {
		return true, nil
	}
	nsLabels := in.nsLabels()
	if in.resource == "namespaces" && in.req.Subresource == "" && (in.operation == "CREATE" || in.operation == "UPDATE") {
		// A Namespace being created or updated: its own labels.
		nsLabels = in.objectLabels
	}
	return m.nsSelector.Matches(labels.Set(nsLabels)), nil
}

// objectMatches is Kubernetes' MatchObjectSelector: the object or the old
// object has matching labels.
func (m *matcher) objectMatches(in *Input) (bool, error) {
	if m.objErr != nil {
		return false, internalError(m.objErr)
	}
	if m.objSelector.Empty() {
		return true, nil
	}
	// Kyverno's attributes always hold both objects (an absent one is
	// empty): each is matched with its labels.
	return m.objSelector.Matches(labels.Set(in.objectLabels)) || m.objSelector.Matches(labels.Set(in.oldObjectLabels)), nil
}

// rulesMatch reports whether one of the rules selects the request
// (Kubernetes' rules.Matcher, and resourceNames as Kyverno matches them).
func rulesMatch(rules []admissionregistrationv1.NamedRuleWithOperations, in *Input) bool {
	for i := range rules {
		r := &rules[i]
		if !ruleMatches(&r.RuleWithOperations, in) {
			continue
		}
		if len(r.ResourceNames) == 0 {
			return true
		}
		if in.name == "" {
			// An object created with generateName matches a name that
			// prefixes it.
			for _, n := range r.ResourceNames {
				if in.generateName != "" && strings.HasPrefix(in.generateName, n) {
					return true
				}
			}
			continue
		}
		if slices.Contains(r.ResourceNames, in.name) {
			return true
		}
	}
	return false
}

func ruleMatches(r *admissionregistrationv1.RuleWithOperations, in *Input) bool {
	isNamespace := in.resGroup == "" && in.resVersion == "v1" && in.resource == "namespaces"
	if r.Scope != nil {
		switch *r.Scope {
		case admissionregistrationv1.AllScopes:
		case admissionregistrationv1.NamespacedScope:
			if isNamespace || in.namespace == "" {
				return false
			}
		case admissionregistrationv1.ClusterScope:
			if !isNamespace && in.namespace != "" {
				return false
			}
		default:
			return false
		}
	}
	opMatch := false
	for _, op := range r.Operations {
		if op == admissionregistrationv1.OperationAll || string(op) == in.operation {
			opMatch = true
			break
		}
	}
	if !opMatch || !exactOrWildcard(r.APIGroups, in.resGroup) || !exactOrWildcard(r.APIVersions, in.resVersion) {
		return false
	}
	for _, res := range r.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == in.resource) && (sub == "*" || sub == in.req.Subresource) {
			return true
		}
	}
	return false
}

func exactOrWildcard(items []string, requested string) bool {
	for _, it := range items {
		if it == "*" || it == requested {
			return true
		}
	}
	return false
}

// internalError words a selector error as Kubernetes' predicates return
// it (apierrors.NewInternalError).
func internalError(err error) error {
	//lint:ignore ST1005 Kubernetes' wording (apierrors.NewInternalError)
	return fmt.Errorf("Internal error occurred: %w", err)
}

// hasSelector is Kyverno's CLI test of constraints whose non-matching
// responses it drops: a single resource rule without resource names,
// selectors or exclusions. Kyverno's CLI keeps an empty response (the
// resource "was excluded") for the others.
func hasSelector(mc *admissionregistrationv1.MatchResources) bool {
	if mc == nil {
		return false
	}
	if ns := mc.NamespaceSelector; ns != nil && (len(ns.MatchLabels) > 0 || len(ns.MatchExpressions) > 0) {
		return false
	}
	if os := mc.ObjectSelector; os != nil && (len(os.MatchLabels) > 0 || len(os.MatchExpressions) > 0) {
		return false
	}
	if len(mc.ExcludeResourceRules) != 0 || len(mc.ResourceRules) != 1 {
		return false
	}
	return len(mc.ResourceRules[0].ResourceNames) == 0
}

// Matcher is a compiled matchConstraints, for the other kinds that match
// as this package does (engine/mpol; engine/vap for
// ValidatingAdmissionPolicies and their bindings): Kyverno matches every
// kind with matchConstraints through the same pkg/cel/matching.
type Matcher struct{ m *matcher }

// CompileMatcher compiles constraints (nil matches nothing).
func CompileMatcher(mc *admissionregistrationv1.MatchResources) *Matcher {
	return &Matcher{m: compileMatcher(mc)}
}

// Matches reports whether the constraints select the request; a selector
// that does not parse is an error, worded as Kubernetes words it.
func (m *Matcher) Matches(in *Input) (bool, error) { return m.m.matches(in) }

// DropsUnmatched reports whether Kyverno's CLI drops the response of a
// policy with these constraints for a resource they do not match (see
// Variant.DropsUnmatched).
func (m *Matcher) DropsUnmatched() bool { return m.m != nil && hasSelector(m.m.constraints) }
