package reportwriter

import (
	"crypto/sha256"
	"reflect"
	"time"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// resourceState holds the two intermediary reports of one resource.
type resourceState struct {
	admission, background *Intermediary
	// reports are the final reports holding rows of the resource (a
	// slice: a resource is in a few reports, one per policy, and a map
	// per resource would cost more than its rows).
	reports []ReportKey
}

func (rs *resourceState) get(s Source) *Intermediary {
	if s == SourceBackground {
		return rs.background
	}
	return rs.admission
}

func (rs *resourceState) set(s Source, in *Intermediary) {
	if s == SourceBackground {
		rs.background = in
	} else {
		rs.admission = in
	}
}

func (rs *resourceState) owner() Resource {
	if rs.admission != nil && rs.background != nil {
		if rs.admission.latest().After(rs.background.latest()) {
			return rs.admission.Owner
		}
		return rs.background.Owner
	}
	if rs.admission != nil {
		return rs.admission.Owner
	}
	return rs.background.Owner
}

func (rs *resourceState) latest() time.Time {
	var t time.Time
	for _, in := range []*Intermediary{rs.admission, rs.background} {
		if in != nil && in.latest().After(t) {
			t = in.latest()
		}
	}
	return t
}

// model is the writer's state: intermediary reports per resource and
// source, the final reports built from them, tombstones of deleted
// resources and the latest policy set. It is owned by one goroutine.
//
// Applying an item records what changed (dirty resources, intermediaries,
// tombstones, the policy set); changes() turns that into a Changes for the
// store and clears it.
type model struct {
	modelConfig
	resources  map[string]*resourceState
	tombstones map[string]time.Time
	reports    map[ReportKey]*finalReport

	// now is the writer's clock for the items being applied (set by the
	// writer before each flush).
	now time.Time
	// senders hold the latest policy set of each sender (policies.go).
	senders map[string]*PolicySet
	// viewCache is the policy view at now (nil: to compute).
	viewCache *policyView
	// reconciled are the known policies of the last reconciliation;
	// deferred is the oldest gone entry it kept because it was newer
	// than the horizon (zero: none).
	reconciled map[string]*knownPolicy
	deferred   time.Time
	// strs shares the strings that repeat across entries (intern.go).
	strs interner
	// tombsSkipped counts the deletions applied without a tombstone
	// (MaxTombstones) since the writer last read it.
	tombsSkipped int

	// pending changes since the last changes() call
	dirtyInter   map[interKey]bool
	dirtyReports map[ReportKey]bool
	dirtyTombs   map[string]bool
	dirtyPolicy  bool
}

type interKey struct {
	source Source
	key    string
}

// modelConfig are the options of the writer the model applies.
type modelConfig struct {
	// groupResults renders one result entry per outcome of a rule
	// (Options.GroupResults).
	groupResults bool
	// senderTTL is Options.PolicySenderTTL; maxSenders is
	// Options.MaxPolicySenders.
	senderTTL  time.Duration
	maxSenders int
	// maxResources is Options.MaxResources; maxTombstones is
	// Options.MaxTombstones.
	maxResources, maxTombstones int
}

func newModel(cfg modelConfig) *model {
	return &model{
		modelConfig:  cfg,
		senders:      map[string]*PolicySet{},
		resources:    map[string]*resourceState{},
		tombstones:   map[string]time.Time{},
		reports:      map[ReportKey]*finalReport{},
		dirtyInter:   map[interKey]bool{},
		dirtyReports: map[ReportKey]bool{},
		dirtyTombs:   map[string]bool{},
	}
}

// applyOutcome tells what an item did.
type applyOutcome int

const (
	applied   applyOutcome = iota // the state changed
	unchanged                     // a duplicate, or older than the state
	ignored                       // nothing to record (dry run, denied, CONNECT)
	refused                       // over a limit of the writer: not applied, rejected
)

func (m *model) apply(it item) applyOutcome {
	switch {
	case it.eval != nil:
		return m.applyEvaluation(it.eval)
	case it.scan != nil:
		return m.applyScanDone(it.scan)
	default:
		return m.applyPolicySet(it.policy)
	}
}

// applyEvaluation applies the seed's reporting rules (see doc.go) to one
// evaluation.
func (m *model) applyEvaluation(ev *evaluation) applyOutcome {
	key := ev.resource.Key()
	if ev.source == SourceAdmission {
		if ev.dryRun || ev.denied || ev.operation == verdictv1.Operation_OPERATION_CONNECT {
			return ignored
		}
	}
	if ev.operation == verdictv1.Operation_OPERATION_DELETE {
		// An admission DELETE, or a scanner's watch that saw the resource
		// go: every entry of the resource goes, whatever its source.
		return m.deleteResource(key, ev.time)
	}
	if ts, ok := m.tombstones[key]; ok && !ev.time.After(ts) {
		return unchanged
	}
	rs := m.resources[key]
	var old *Intermediary
	if rs != nil {
		old = rs.get(ev.source)
	}
	next := m.merge(old, ev)
	if old == nil && len(next.Policies) == 0 {
		return unchanged
	}
	if reflect.DeepEqual(old, next) {
		return unchanged
	}
	if rs == nil {
		if len(m.resources) >= m.maxResources {
			return refused
		}
		rs = &resourceState{}
		m.resources[key] = rs
	}
	rs.set(ev.source, next)
	m.dirtyInter[interKey{ev.source, key}] = true
	m.refresh(key)
	return applied
}

// merge returns old updated with ev: the entries of a policy come from the
// newest evaluation that covered it.
func (m *model) merge(old *Intermediary, ev *evaluation) *Intermediary {
	next := old.clone()
	if next == nil {
		next = &Intermediary{Source: ev.source, Owner: m.strs.resource(ev.resource)}
	}
	newest := !ev.time.Before(next.latest())
	accept := map[string]*PolicyVersion{} // nil value: every rule
	var takes []PolicyVersion
	for _, p := range ev.policies {
		if ev.source == SourceBackground && !p.Background {
			// background: false — never reported from a background scan.
			continue
		}
		var filter *PolicyVersion
		if v := m.view(); v.gone(p, ev.source) {
			if ev.time.Before(v.horizon) {
				// Every live sender said since that it does not hold it.
				continue
			}
			m.deferTo(ev.time)
		} else if kp := v.known[p.Key()]; kp != nil && !kp.Hashes[p.Hash] {
			// A changed policy keeps the rules a live sender still has.
			if ev.time.Before(v.horizon) {
				filter = &p
			} else {
				m.deferTo(ev.time)
			}
		}
		floor := next.Complete
		if cur, ok := next.policy(p.Key()); ok && cur.Time.After(floor) {
			floor = cur.Time
		}
		if !ev.time.After(floor) {
			continue
		}
		accept[p.Key()] = filter
		takes = append(takes, m.strs.policy(p))
	}
	next.drop(func(p PolicyVersion) bool {
		if _, ok := accept[p.Key()]; ok {
			return false
		}
		if ev.complete && ev.time.After(next.Complete) && p.Time.Before(ev.time) {
			return false
		}
		return true
	})
	if ev.complete && ev.time.After(next.Complete) {
		next.Complete = ev.time
	}
	next.Policies = append(next.Policies, takes...)
	for _, e := range ev.results {
		filter, ok := accept[e.Policy]
		if !ok || (filter != nil && m.view().ruleGone(*filter, e.Rule)) {
			continue
		}
		next.Results = append(next.Results, m.strs.entry(e))
	}
	if newest {
		next.Owner = m.strs.resource(ev.resource)
		next.ResourceVersion = ev.resourceVersion
		next.Hash = ev.hash
	}
	next.normalize()
	return next
}

// deleteResource removes the entries of a resource older than t and
// remembers the deletion, so that an older evaluation sent again does not
// bring them back.
func (m *model) deleteResource(key string, t time.Time) applyOutcome {
	out := unchanged
	rs := m.resources[key]
	switch ts, ok := m.tombstones[key]; {
	case !ok && len(m.tombstones) >= m.maxTombstones:
		// Over the max tombstones: the entries go, without a tombstone
		// (counted); a resource the writer does not hold is refused.
		if rs == nil {
			return refused
		}
		m.tombsSkipped++
	case !ok || t.After(ts):
		m.tombstones[key] = t
		m.dirtyTombs[key] = true
		out = applied
	}
	if rs == nil {
		return out
	}
	for _, s := range []Source{SourceAdmission, SourceBackground} {
		in := rs.get(s)
		if in == nil {
			continue
		}
		next := in.clone()
		next.drop(func(p PolicyVersion) bool { return p.Time.After(t) })
		if len(next.Policies) == 0 {
			next = nil
		} else {
			next.normalize()
		}
		if !reflect.DeepEqual(in, next) {
			rs.set(s, next)
			m.dirtyInter[interKey{s, key}] = true
			out = applied
		}
	}
	m.refresh(key)
	return out
}

// applyScanDone removes the resources of the scan's scope that it did not
// see and that were not evaluated since it started.
func (m *model) applyScanDone(s *scanDone) applyOutcome {
	out := unchanged
	for key, rs := range m.resources {
		if s.seen[key] || !s.inScope(rs.owner()) || !rs.latest().Before(s.started) {
			continue
		}
		if m.deleteResource(key, s.started) == applied {
			out = applied
		}
	}
	return out
}

// refresh recomputes the rows of resource key in the final reports.
func (m *model) refresh(key string) {
	rs := m.resources[key]
	var rows map[ReportKey][]row
	if rs != nil {
		rows = finalRows(rs)
	}
	var old []ReportKey
	if rs != nil {
		old = rs.reports
	}
	for _, rk := range old {
		if _, ok := rows[rk]; !ok {
			m.setRows(rk, key, nil, nil)
		}
	}
	next := make([]ReportKey, 0, len(rows))
	for rk, rr := range rows {
		m.setRows(rk, key, rr, rs)
		next = append(next, rk)
	}
	if rs == nil {
		return
	}
	rs.reports = next
	if rs.admission == nil && rs.background == nil {
		delete(m.resources, key)
	}
}

func (m *model) setRows(rk ReportKey, key string, rows []row, rs *resourceState) {
	fr := m.reports[rk]
	if fr == nil {
		if len(rows) == 0 {
			return
		}
		fr = &finalReport{key: rk, rows: map[string][]row{}}
		m.reports[rk] = fr
	}
	if len(rows) == 0 {
		if _, ok := fr.rows[key]; !ok {
			return
		}
		delete(fr.rows, key)
	} else {
		same := reflect.DeepEqual(fr.rows[key], rows)
		// The rows point into the resource's current intermediaries:
		// replaced even when equal, so that they never keep the ones
		// replaced alive.
		fr.rows[key] = rows
		if same {
			return
		}
	}
	m.dirtyReports[rk] = true
}

// finalRows picks, for each policy of a resource, the entries of the
// source whose evaluation is newer (Kyverno merges admission and
// background results the same way: the later one wins), and groups them by
// final report.
func finalRows(rs *resourceState) map[ReportKey][]row {
	out := map[ReportKey][]row{}
	add := func(in, other *Intermediary) {
		if in == nil {
			return
		}
		for i := range in.Policies {
			p := &in.Policies[i]
			if q, ok := other.policy(p.Key()); ok && (q.Time.After(p.Time) || (q.Time.Equal(p.Time) && other.Source == SourceBackground)) {
				continue
			}
			rk := reportKeyOf(*p, in.Owner)
			for j := range in.Results {
				if e := &in.Results[j]; e.Policy == p.Key() {
					out[rk] = append(out[rk], row{entry: e, policy: p, resource: &in.Owner})
				}
			}
		}
	}
	add(rs.admission, rs.background)
	add(rs.background, rs.admission)
	return out
}

// changes collects the writes of the changes applied since the last call,
// renders the changed final reports at time now, and forgets tombstones
// older than now - tombstoneTTL when gc is set.
func (m *model) changes(now time.Time, gc bool, tombstoneTTL time.Duration, reports bool) (*Changes, error) {
	c := &Changes{}
	for k := range m.dirtyInter {
		var in *Intermediary
		if rs := m.resources[k.key]; rs != nil {
			in = rs.get(k.source)
		}
		if in == nil {
			c.DeleteIntermediaries = append(c.DeleteIntermediaries, IntermediaryKey{Source: k.source, Resource: k.key})
		} else {
			c.PutIntermediaries = append(c.PutIntermediaries, in)
		}
	}
	for rk := range m.dirtyReports {
		if !reports {
			break
		}
		if err := m.renderReport(c, rk, now); err != nil {
			return nil, err
		}
	}
	if len(m.dirtyTombs) > 0 {
		c.PutTombstones = make(map[string]time.Time, len(m.dirtyTombs))
		for k := range m.dirtyTombs {
			if t, ok := m.tombstones[k]; ok {
				c.PutTombstones[k] = t
			} else {
				c.DeleteTombstones = append(c.DeleteTombstones, k)
			}
		}
	}
	if gc {
		for k, t := range m.tombstones {
			if t.Before(now.Add(-tombstoneTTL)) {
				delete(m.tombstones, k)
				delete(c.PutTombstones, k)
				c.DeleteTombstones = append(c.DeleteTombstones, k)
			}
		}
	}
	if m.dirtyPolicy {
		c.Policies = m.policySets()
	}
	clear(m.dirtyInter)
	if reports {
		clear(m.dirtyReports)
	}
	clear(m.dirtyTombs)
	m.dirtyPolicy = false
	return c, nil
}

// renderReport adds the write of final report rk, rendered at time now,
// to c: a put, a delete when it has no rows left, nothing when it renders
// as stored.
func (m *model) renderReport(c *Changes, rk ReportKey, now time.Time) error {
	fr := m.reports[rk]
	st, err := fr.store(now, m.groupResults)
	if err != nil {
		return err
	}
	if st == nil {
		delete(m.reports, rk)
		if fr.stored {
			c.DeleteReports = append(c.DeleteReports, rk)
		}
		return nil
	}
	sum := sha256.Sum256(st.Report)
	if fr.stored && sum == fr.sum {
		return nil // rendered the same: nothing to write
	}
	fr.stored, fr.sum = true, sum
	c.PutReports = append(c.PutReports, st)
	return nil
}

// writeReports renders the changed final reports at time now and hands
// them to write a part at a time: a part is written once its reports'
// JSON reaches maxBytes (and the last part with the rest), so that the
// JSON of at most about maxBytes, plus one report, is held at once. A
// report is dirty until the part holding it is written.
func (m *model) writeReports(now time.Time, maxBytes int, write func(*Changes) error) error {
	c, size := &Changes{}, 0
	var keys []ReportKey
	flush := func() error {
		if !c.Empty() {
			if err := write(c); err != nil {
				return err
			}
		}
		for _, rk := range keys {
			delete(m.dirtyReports, rk)
		}
		c, size, keys = &Changes{}, 0, keys[:0]
		return nil
	}
	for rk := range m.dirtyReports {
		n := len(c.PutReports)
		if err := m.renderReport(c, rk, now); err != nil {
			return err
		}
		keys = append(keys, rk)
		if len(c.PutReports) > n {
			size += len(c.PutReports[n].Report)
		}
		if size >= maxBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// load builds a model from a store's content.
func load(st *State, cfg modelConfig) *model {
	m := newModel(cfg)
	for _, in := range st.Intermediaries {
		m.strs.intermediary(in)
		key := in.Owner.Key()
		rs := m.resources[key]
		if rs == nil {
			rs = &resourceState{}
			m.resources[key] = rs
		}
		rs.set(in.Source, in)
	}
	for k, t := range st.Tombstones {
		m.tombstones[k] = t
	}
	if st.Policies != nil {
		for _, ps := range st.Policies.Sets {
			ps.index()
			m.senders[ps.Sender] = ps
		}
	}
	for key := range m.resources {
		m.refresh(key)
	}
	stored := make(map[ReportKey]*StoredReport, len(st.Reports))
	for _, sr := range st.Reports {
		stored[sr.Key] = sr
	}
	for rk, fr := range m.reports {
		if sr := stored[rk]; sr != nil {
			// Rendered again at the first report flush; written only if
			// it differs (the writer stopped before writing it).
			fr.created, fr.updated = sr.Created, sr.Updated
			fr.stored, fr.sum = true, sha256.Sum256(sr.Report)
		}
	}
	for rk := range stored {
		if m.reports[rk] == nil {
			// A stored report without rows: remove it at the next flush.
			m.reports[rk] = &finalReport{key: rk, rows: map[string][]row{}, stored: true}
			m.dirtyReports[rk] = true
		}
	}
	clear(m.dirtyInter)
	return m
}
