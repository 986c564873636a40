package reportwriter

import (
	"reflect"
	"slices"
	"strings"
	"time"
)

// MaxSenderBytes bounds PolicySet.sender; a longer one is rejected.
const MaxSenderBytes = 256

// PolicySet is the latest set of policies a sender (a decision server)
// reported.
type PolicySet struct {
	// Sender identifies the decision server process ("" for senders that
	// send none).
	Sender string `json:"sender,omitempty"`
	// Time is when the sender read its policies (its clock).
	Time time.Time `json:"time"`
	// Received is when the writer applied the set (its clock): the
	// sender is live until Received + Options.PolicySenderTTL.
	Received time.Time     `json:"received,omitzero"`
	Policies []PolicyState `json:"policies"`

	byKey    map[string]int // index into Policies
	stopping bool           // the sender stops (the item, never stored)
}

// PolicyState is one policy of a PolicySet.
type PolicyState struct {
	Version PolicyVersion `json:"version"`
	Rules   []string      `json:"rules"`
}

// PolicySets are the latest policy set of each sender, sorted by sender.
type PolicySets struct {
	Sets []*PolicySet `json:"sets"`
}

func (s *PolicySet) index() {
	s.byKey = make(map[string]int, len(s.Policies))
	for i, p := range s.Policies {
		s.byKey[p.Version.Key()] = i
	}
}

// policyView is what the live senders' policy sets say at one time: the
// rule of reconciliation (see doc.go, "Policies the servers no longer
// have").
//
// An entry (a policy version's results on a resource, from one source) is
// gone when no live sender lists its policy, or, for a background entry,
// none lists it with background true; an entry's rule is gone when no live
// sender has the policy in the entry's version (content hash) and none has
// the rule. A gone entry (or rule) older than the horizon, the oldest set
// of the live senders, is removed: every live sender has said since that
// it does not hold it. A newer one is kept until the horizon passes it
// (a sender may not have reported a policy it just added). With no live
// sender, nothing is gone.
type policyView struct {
	live    bool
	horizon time.Time
	known   map[string]*knownPolicy // by policy key
	// until is when the first live sender expires: the view must be
	// computed again then.
	until time.Time
}

// knownPolicy is a policy as the live senders have it, merged.
type knownPolicy struct {
	Hashes     map[string]bool
	Rules      map[string]bool
	Background bool
}

// view returns the policy view at m.now, forgetting the senders whose
// last set is older than the sender TTL.
func (m *model) view() *policyView {
	if v := m.viewCache; v != nil && (v.until.IsZero() || m.now.Before(v.until)) {
		return v
	}
	v := &policyView{known: map[string]*knownPolicy{}}
	for sender, ps := range m.senders {
		expiry := ps.Received.Add(m.senderTTL)
		if !m.now.Before(expiry) {
			delete(m.senders, sender)
			m.dirtyPolicy = true
			continue
		}
		if v.until.IsZero() || expiry.Before(v.until) {
			v.until = expiry
		}
		if !v.live || ps.Time.Before(v.horizon) {
			v.horizon = ps.Time
		}
		v.live = true
		for _, p := range ps.Policies {
			kp := v.known[p.Version.Key()]
			if kp == nil {
				kp = &knownPolicy{Hashes: map[string]bool{}, Rules: map[string]bool{}}
				v.known[p.Version.Key()] = kp
			}
			kp.Hashes[p.Version.Hash] = true
			for _, r := range p.Rules {
				kp.Rules[r] = true
			}
			kp.Background = kp.Background || p.Version.Background
		}
	}
	m.viewCache = v
	return v
}

// gone reports whether the entries of policy version p from source s are
// gone under v (whatever their time).
func (v *policyView) gone(p PolicyVersion, s Source) bool {
	if !v.live {
		return false
	}
	kp, ok := v.known[p.Key()]
	return !ok || (s == SourceBackground && !kp.Background)
}

// ruleGone reports whether the entries of rule of policy version p are
// gone under v. The results of a ValidatingPolicy are the policy's, not
// of named rules: those of a changed policy stay until it is evaluated
// again.
func (v *policyView) ruleGone(p PolicyVersion, rule string) bool {
	if !v.live || policyKinds[p.Kind].unnamedRules {
		return false
	}
	kp, ok := v.known[p.Key()]
	return ok && !kp.Hashes[p.Hash] && !kp.Rules[rule]
}

// deferTo notes that a gone entry of time t was kept because it is newer
// than the horizon: reconcile again once the horizon passes it.
func (m *model) deferTo(t time.Time) {
	if m.deferred.IsZero() || t.Before(m.deferred) {
		m.deferred = t
	}
}

// applyPolicySet records the latest set of a sender (or forgets a sender
// that stops), then reconciles the entries with the new view when it
// changed. It returns refused when a new sender would exceed
// maxSenders live senders.
func (m *model) applyPolicySet(ps *PolicySet) applyOutcome {
	m.view() // forget the expired senders first
	old := m.senders[ps.Sender]
	if old != nil && !ps.Time.After(old.Time) {
		return unchanged // a set resent, or older than the sender's latest
	}
	if ps.stopping {
		if old == nil {
			return unchanged
		}
		delete(m.senders, ps.Sender)
	} else {
		if old == nil && len(m.senders) >= m.maxSenders {
			return refused
		}
		ps.Received = m.now
		m.senders[ps.Sender] = ps
	}
	m.dirtyPolicy = true
	m.viewCache = nil
	m.maybeReconcile()
	return applied
}

// maybeReconcile reconciles the entries with the current view when the
// known policies changed since the last reconciliation, or the horizon
// passed an entry kept because it was newer.
func (m *model) maybeReconcile() {
	v := m.view()
	if !v.live {
		return
	}
	if reflect.DeepEqual(v.known, m.reconciled) && (m.deferred.IsZero() || !v.horizon.After(m.deferred)) {
		return
	}
	m.reconcile(v)
	m.reconciled = v.known
}

// reconcile removes the gone entries and rules older than the horizon
// (see policyView) from every intermediary, and notes the gone ones kept
// because they are newer.
func (m *model) reconcile(v *policyView) {
	m.deferred = time.Time{}
	for key, rs := range m.resources {
		for _, s := range []Source{SourceAdmission, SourceBackground} {
			in := rs.get(s)
			if in == nil || !m.dropsFrom(v, in) {
				continue
			}
			next := in.clone()
			next.drop(func(p PolicyVersion) bool {
				return !(v.gone(p, s) && p.Time.Before(v.horizon))
			})
			next.Results = slices.DeleteFunc(next.Results, func(e Entry) bool {
				p, _ := next.policy(e.Policy)
				return v.ruleGone(p, e.Rule) && p.Time.Before(v.horizon)
			})
			next.normalize()
			rs.set(s, next)
			m.dirtyInter[interKey{s, key}] = true
			m.refresh(key)
		}
	}
}

// dropsFrom reports whether reconciling in under v removes something, and
// notes what it keeps only because it is newer than the horizon.
func (m *model) dropsFrom(v *policyView, in *Intermediary) bool {
	drops := false
	for _, p := range in.Policies {
		if v.gone(p, in.Source) {
			if p.Time.Before(v.horizon) {
				drops = true
			} else {
				m.deferTo(p.Time)
			}
		}
	}
	for _, e := range in.Results {
		p, _ := in.policy(e.Policy)
		if v.ruleGone(p, e.Rule) {
			if p.Time.Before(v.horizon) {
				drops = true
			} else {
				m.deferTo(p.Time)
			}
		}
	}
	return drops
}

// policySets returns the senders' sets as stored, sorted by sender.
func (m *model) policySets() *PolicySets {
	out := &PolicySets{Sets: make([]*PolicySet, 0, len(m.senders))}
	for _, ps := range m.senders {
		out.Sets = append(out.Sets, ps)
	}
	slices.SortFunc(out.Sets, func(a, b *PolicySet) int { return strings.Compare(a.Sender, b.Sender) })
	return out
}

// repaired counts what repairFuture removed.
type repaired struct {
	policySets, entries, tombstones int
}

func (r repaired) total() int { return r.policySets + r.entries + r.tombstones }

// repairFuture removes from the model the times later than limit (the
// writer's clock plus the max clock skew), which a store written before
// the skew was checked may hold, and which would otherwise make every
// later item look older, forever: the policy sets of such times (their
// senders send theirs again within a minute), the policies of an
// intermediary evaluated at such a time, with their results (the next
// evaluation of the resource brings them back), an intermediary's
// Complete mark of such a time, and such tombstones. The changes are
// written at the start of the writer.
func (m *model) repairFuture(limit time.Time) repaired {
	var n repaired
	for sender, ps := range m.senders {
		if ps.Time.After(limit) || ps.Received.After(limit) {
			delete(m.senders, sender)
			m.dirtyPolicy = true
			m.viewCache = nil
			n.policySets++
		}
	}
	for key, t := range m.tombstones {
		if t.After(limit) {
			delete(m.tombstones, key)
			m.dirtyTombs[key] = true // written as a delete (see changes)
			n.tombstones++
		}
	}
	for key, rs := range m.resources {
		for _, s := range []Source{SourceAdmission, SourceBackground} {
			in := rs.get(s)
			if in == nil || !in.latest().After(limit) {
				continue
			}
			next := in.clone()
			next.drop(func(p PolicyVersion) bool {
				if p.Time.After(limit) {
					n.entries++
					return false
				}
				return true
			})
			if next.Complete.After(limit) {
				next.Complete = time.Time{}
				n.entries++
			}
			if len(next.Policies) == 0 {
				next = nil
			} else {
				next.normalize()
			}
			rs.set(s, next)
			m.dirtyInter[interKey{s, key}] = true
			m.refresh(key)
		}
	}
	return n
}
