package policy

import (
	"slices"

	"github.com/verdict-policy/verdict/engine/generate"
	"github.com/verdict-policy/verdict/engine/variables"
)

// LookupKinds returns the kinds of the existing resources p's kyverno.io
// rules may read through the evaluator's Lookup (Resource and Resources):
// the targets of generate rules (data and clone) and their clone sources,
// the kinds of cloneList sources, and the targets of mutate rules with
// targets, without duplicates, in rule order. A kind given by a variable
// is known only at evaluation: then all is true and kinds is nil. A kind
// the rule does not set is "" (the lookup then finds only resources
// without a kind).
//
// A GeneratingPolicy reads the resources it generated to synchronize them
// (all is true when it has synchronize); the other kinds of policies read
// none through Resource and Resources.
func (p *Policy) LookupKinds() (kinds []string, all bool) {
	if p.Generating != nil {
		return nil, p.Generating.Synchronize
	}
	add := func(k string) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, r := range p.Rules {
		if r.Mutate != nil {
			for _, t := range r.Mutate.Targets {
				v, ok := t.Selector.StaticAt("kind")
				if !ok {
					return nil, true
				}
				k, _ := v.(string)
				add(k)
			}
		}
		if r.Generate == nil {
			continue
		}
		pats := []*GeneratePattern{r.Generate.Pattern}
		for _, fe := range r.Generate.Foreach {
			pats = append(pats, fe.Pattern)
		}
		for _, pat := range pats {
			if pat == nil || pat.Doc == nil {
				continue
			}
			if !patternKinds(pat.Doc, add) {
				return nil, true
			}
		}
	}
	return kinds, false
}

// patternKinds adds the kinds a generate pattern looks up: its kind (the
// target's, and a clone source's) and its cloneList kinds. It reports
// false when one is given by a variable.
func patternKinds(doc *variables.Document, add func(string)) bool {
	v, ok := doc.StaticAt("kind")
	if !ok {
		return false
	}
	k, _ := v.(string)
	add(k)
	v, ok = doc.StaticAt("cloneList", "kinds")
	if !ok {
		return false
	}
	list, _ := v.([]any)
	for _, item := range list {
		s, _ := item.(string)
		_, kind := generate.KindOf(s)
		add(kind)
	}
	return true
}
