package policy

import (
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
)

// Scope is what one kind of background work on a policy selects: the
// rules that do it and the resources their match blocks select.
type Scope struct {
	// Rules are the names of the rules, in evaluation order (autogen
	// rules included).
	Rules []string
	// Kinds are the resources the rules select, without duplicates, in
	// rule order: the kinds of their match blocks (match.ParseKind), or
	// the resources of the resourceRules of a ValidatingPolicy,
	// MutatingPolicy, ImageValidatingPolicy (their autogen variants
	// included), GeneratingPolicy or ValidatingAdmissionPolicy. Main resources only: a selector of subresources
	// (Pod/exec, pods/status) is left out, as a scan lists objects.
	Kinds []match.Kind
}

// Scopes are the scopes of the background work on a policy.
type Scopes struct {
	// Background is what a background scan evaluates: the validate and
	// verifyImages rules of a background policy that do not read
	// admission data (userInfo, roles, subjects), or the resourceRules of
	// a ValidatingPolicy or MutatingPolicy whose background evaluation is
	// enabled (autogen variants included), the matchConstraints of an
	// ImageValidatingPolicy with background enabled (autogen variants
	// included), or the matchConstraints of a ValidatingAdmissionPolicy
	// labelled reports.kyverno.io/enabled.
	Background Scope
	// GenerateExisting is the generate rules with generateExisting of a
	// background policy, or a GeneratingPolicy with generateExisting
	// (its rule the policy's name, its kinds its resourceRules), replayed
	// for existing triggers.
	GenerateExisting Scope
	// MutateExisting is the mutate rules with targets and
	// mutateExistingOnPolicyUpdate, or a MutatingPolicy with
	// mutateExisting (its rule the policy's name, its kinds the resources
	// of its matchConstraints), replayed for existing triggers.
	MutateExisting Scope
}

// Scopes returns what background work selects in p, from the compiled
// policy.
func (p *Policy) Scopes() Scopes {
	var s Scopes
	if p.Validating != nil {
		if p.Background {
			for _, v := range p.Validating.Variants() {
				s.Background.addResourceRules(v.MatchConstraints())
			}
		}
		return s
	}
	if p.Mutating != nil {
		// Kyverno's background scans report whether the mutations of a
		// MutatingPolicy with background enabled have been applied.
		if p.Background {
			for _, v := range p.Mutating.Variants() {
				s.Background.addResourceRules(v.MatchConstraints())
			}
		}
		// The triggers of mutateExisting: the resources of its
		// matchConstraints, under a rule named after the policy.
		if p.Mutating.MutateExisting {
			s.MutateExisting.Rules = append(s.MutateExisting.Rules, p.Mutating.Name)
			s.MutateExisting.addResourceRules(p.Mutating.Document().Spec.MatchConstraints)
		}
		return s
	}
	if p.ImageValidating != nil {
		// The matchConstraints of the policy and of its autogen variants.
		if p.Background {
			for _, mc := range p.ImageValidating.MatchConstraints() {
				s.Background.addResourceRules(mc)
			}
		}
		return s
	}
	if gp := p.Generating; gp != nil {
		// The triggers of generateExisting: the resources of its
		// resourceRules, under a rule named after the policy (as Kyverno's
		// gpol engine names its one rule).
		if gp.GenerateExisting {
			s.GenerateExisting.Rules = append(s.GenerateExisting.Rules, gp.Name)
			s.GenerateExisting.addResourceRules(gp.Document().Spec.MatchConstraints)
		}
		return s
	}
	if p.Deleting != nil {
		return s // run by the cleanup runner on its schedule, not by scans
	}
	if p.VAP != nil {
		// Background: labelled reports.kyverno.io/enabled (CompileVAP).
		// In a background scan a ValidatingAdmissionPolicy with bindings
		// is matched against its own matchConstraints too: their
		// resources are those it can report on.
		if p.Background {
			s.Background.addResourceRules(p.VAP.MatchConstraints())
		}
		return s
	}
	for _, r := range p.Rules {
		if r.Raw == nil || r.UsesUserInfo {
			continue
		}
		switch {
		case r.Type == Generate && r.Generate != nil && r.Generate.Existing:
			if p.Background {
				s.GenerateExisting.add(r)
			}
		case r.Type == Mutate && r.Mutate != nil && len(r.Mutate.Targets) > 0 && r.Mutate.ExistingOnPolicyUpdate:
			s.MutateExisting.add(r)
		case r.Type == Validate || r.Type == VerifyImages:
			if p.Background {
				s.Background.add(r)
			}
		}
	}
	return s
}

// add adds a rule and the kinds of its match block.
func (s *Scope) add(r *Rule) {
	s.Rules = append(s.Rules, r.Name)
	m := r.Raw.Match
	var kinds []string
	if m.Resources != nil {
		kinds = append(kinds, m.Resources.Kinds...)
	}
	for _, f := range slices.Concat([]kyverno.ResourceFilter(nil), m.Any, m.All) {
		if f.Resources != nil {
			kinds = append(kinds, f.Resources.Kinds...)
		}
	}
	for _, k := range kinds {
		s.addKind(match.ParseKind(k))
	}
}

// addResourceRules adds the resources of the resourceRules of mc (nil:
// none, as a JSON-mode ValidatingPolicy has).
func (s *Scope) addResourceRules(mc *admissionregistrationv1.MatchResources) {
	if mc == nil {
		return
	}
	for _, rule := range mc.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, ver := range rule.APIVersions {
				for _, res := range rule.Resources {
					if strings.Contains(res, "/") {
						continue // subresources ("pods/status", "pods/*")
					}
					s.addKind(match.Kind{Group: g, Version: ver, Resource: res})
				}
			}
		}
	}
}

func (s *Scope) addKind(k match.Kind) {
	if k.MainResource() && !slices.Contains(s.Kinds, k) {
		s.Kinds = append(s.Kinds, k)
	}
}

// Kinds returns the kinds p's rules match (autogen rules included), and
// the resources of the scopes of the policy kinds without rules, without
// duplicates, in rule order: the kinds kyverno apply --cluster lists.
func (p *Policy) Kinds() []match.Kind {
	var s Scope
	for _, r := range p.Rules {
		s.add(r)
	}
	sc := p.Scopes()
	for _, k := range slices.Concat(sc.Background.Kinds, sc.GenerateExisting.Kinds, sc.MutateExisting.Kinds) {
		s.addKind(k)
	}
	return s.Kinds
}
