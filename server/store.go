package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Codes of store errors that are not engine codes.
const (
	// CodeDuplicatePolicy: two documents define the same policy; the first
	// one (by source, then origin) is used.
	CodeDuplicatePolicy engine.Code = "duplicate_policy"
	// CodeSource: a file or other origin could not be read.
	CodeSource engine.Code = "source_error"
)

// Store holds the policies of its sources, compiled, and answers which
// policies a request evaluates. Every version of a policy document is
// compiled once, through an LRU keyed by policy identity and content hash;
// inline policies sent with requests share that cache.
//
// The current set of policies is an immutable value replaced as a whole
// when a source reports a change, so a request sees one consistent set.
type Store struct {
	cache *compileCache
	// inlineCache holds the compiled inline policies, within a byte
	// budget; limits bound what one request has compiled.
	inlineCache *compileCache
	limits      requestLimits
	log         *slog.Logger
	metrics     *metrics

	mu      sync.Mutex // serializes updates
	sources []PolicySource
	states  map[string]*sourceState
	set     atomic.Pointer[policySet]
	ready   chan struct{} // closed when every source reported once
}

// sourceState is what the Store knows of one source.
type sourceState struct {
	received bool
	entries  map[string]*entry // by identity
	errors   []*verdictv1.SourceError
}

// entry is one policy of a source: the latest document read and the
// version in use (the same, unless the latest does not compile).
type entry struct {
	// group is the API group of the kind: kyverno.io or
	// policies.kyverno.io (both have a PolicyException).
	group                 string
	kind, namespace, name string
	labels                map[string]string
	origin                string // "file:line"
	file                  string // Document.Origin
	docHash               string // SHA-256 of the latest document read
	json                  []byte // the latest document read
	errs                  []*engine.Error

	// The version in use; policy (or exception, for a PolicyException,
	// celException for a policies.kyverno.io one) is nil when no version
	// compiled.
	policy       *policy.Policy
	exception    *policy.Exception
	celException *vpol.Exception
	// binding is set for a ValidatingAdmissionPolicyBinding.
	binding    *vap.Binding
	servedJSON []byte
}

// key is how requests name a policy: "name" or "namespace/name".
func (e *entry) key() string { return policyKey(e.namespace, e.name) }

// identity is unique among the documents of the store: kind, namespace
// and name, with the group for the policies.kyverno.io kinds (whose
// PolicyException is another kind than kyverno.io's).
func (e *entry) identity() string {
	id := e.kind + "/" + e.namespace + "/" + e.name
	if e.group == vpol.Group {
		id = vpol.Group + "/" + id
	}
	return id
}

// ready reports whether a version of the entry is in use.
func (e *entry) ready() bool {
	return e.policy != nil || e.exception != nil || e.celException != nil || e.binding != nil
}

// policySet is an immutable view of every policy of every source.
type policySet struct {
	// policies are the compiled policies in use, sorted by kind,
	// namespace and name.
	policies []*policy.Policy
	// exceptions are the compiled PolicyExceptions in use, sorted;
	// celExceptions the policies.kyverno.io ones.
	exceptions    []*policy.Exception
	celExceptions []*vpol.Exception
	// vapBindings are the ValidatingAdmissionPolicyBindings in use that
	// background scans read (not labelled reports.kyverno.io/disabled, as
	// in Kyverno), sorted by name.
	vapBindings []*vap.Binding
	// entries are every policy, exception and binding, sorted by kind,
	// namespace and name.
	entries []*entry
	// byKey holds the ClusterPolicies and Policies by key.
	byKey        map[string]*entry
	byIdentity   map[string]*entry
	sourceErrors []*verdictv1.SourceError
}

// requestLimits bound the policy documents one request has compiled
// (Options.MaxRequestPolicyBytes, MaxRequestPolicyRules).
type requestLimits struct {
	bytes, rules int
}

// newStore returns a Store fed by sources. Run starts them.
func newStore(sources []PolicySource, cache, inlineCache *compileCache, limits requestLimits, log *slog.Logger, m *metrics) *Store {
	s := &Store{
		cache:       cache,
		inlineCache: inlineCache,
		limits:      limits,
		log:         log,
		metrics:     m,
		sources:     sources,
		states:      make(map[string]*sourceState, len(sources)),
		ready:       make(chan struct{}),
	}
	for _, src := range sources {
		s.states[src.Name()] = &sourceState{}
	}
	s.set.Store(&policySet{byKey: map[string]*entry{}, byIdentity: map[string]*entry{}})
	if len(sources) == 0 {
		close(s.ready)
	}
	return s
}

// run runs every source until ctx is done. It returns nil then, or at
// once the first error of a source that cannot work (the other sources
// keep running until ctx is done).
func (s *Store) run(ctx context.Context) error {
	errs := make(chan error, len(s.sources))
	for _, src := range s.sources {
		go func() {
			name := src.Name()
			err := src.Run(ctx, func(snap Snapshot) { s.update(name, snap) })
			if err != nil {
				err = fmt.Errorf("policy source %s: %w", name, err)
			}
			errs <- err
		}()
	}
	for range s.sources {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// Ready is closed when every source has reported its first snapshot.
func (s *Store) Ready() <-chan struct{} { return s.ready }

// current returns the current policy set.
func (s *Store) current() *policySet { return s.set.Load() }

// update replaces the state of one source with snap.
func (s *Store) update(source string, snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.states[source]
	if st == nil {
		return
	}
	s.metrics.reloads.WithLabelValues(source).Inc()
	prev := st.entries
	next := make(map[string]*entry, len(snap.Documents))
	var srcErrs []*verdictv1.SourceError
	for _, e := range snap.Errors {
		s.log.Warn("policy source error; keeping what it held before", "source", e.Origin, "error", e.Err)
		srcErrs = append(srcErrs, sourceError(e.Origin, CodeSource, e.Err))
	}
	for _, d := range snap.Documents {
		e, err := s.entryFor(d, prev)
		if err != nil {
			s.log.Warn("policy document ignored", "source", origin(d), "error", err)
			srcErrs = append(srcErrs, sourceError(origin(d), engine.CodeDecode, err))
			continue
		}
		if e == nil {
			continue
		}
		if first, dup := next[e.identity()]; dup {
			err := fmt.Errorf("%s %s is also defined at %s, which is used", e.kind, e.key(), first.origin)
			s.log.Warn("duplicate policy", "source", e.origin, "error", err)
			srcErrs = append(srcErrs, sourceError(e.origin, CodeDuplicatePolicy, err))
			continue
		}
		next[e.identity()] = e
	}
	// Keep the policies of origins that could not be read.
	for k, e := range prev {
		if _, ok := next[k]; ok {
			continue
		}
		if failedOrigin(snap.Errors, e.file) {
			next[k] = e
			continue
		}
		s.log.Info("policy removed", "policy", e.kind+" "+e.key(), "source", e.origin)
	}
	st.entries, st.errors = next, srcErrs
	// Publish before Ready closes: a request that sees Ready must see the
	// policies.
	s.publish()
	if !st.received {
		st.received = true
		if s.allReceived() {
			close(s.ready)
		}
	}
}

func (s *Store) allReceived() bool {
	for _, st := range s.states {
		if !st.received {
			return false
		}
	}
	return true
}

func failedOrigin(errs []SourceError, file string) bool {
	for _, e := range errs {
		if e.Origin == file || strings.HasPrefix(file, strings.TrimSuffix(e.Origin, "/")+"/") {
			return true
		}
	}
	return false
}

func origin(d Document) string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d", d.Origin, d.Line)
	}
	return d.Origin
}

// otherPolicyKinds are Kyverno policy kinds the engine does not evaluate;
// they are listed as unsupported instead of being ignored.
var otherPolicyKinds = map[string]bool{
	"MutatingAdmissionPolicy": true,
}

// peek is the part of a document read before decoding it.
type peek struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// entryFor compiles a document (through the cache) into an entry. It
// returns nil for a document that is not a policy, and an error for a
// policy document without a name.
func (s *Store) entryFor(d Document, prev map[string]*entry) (*entry, error) {
	var pk peek
	if err := json.Unmarshal(d.JSON, &pk); err != nil {
		return nil, err
	}
	group, _, _ := strings.Cut(pk.APIVersion, "/")
	policyKind := group == "kyverno.io" && (pk.Kind == kyverno.KindClusterPolicy || pk.Kind == kyverno.KindPolicy)
	exceptionKind := group == "kyverno.io" && pk.Kind == kindPolicyException
	validatingKind := vpol.IsPolicy(pk.APIVersion, pk.Kind)
	celExceptionKind := vpol.IsException(pk.APIVersion, pk.Kind)
	vapKind := vap.IsPolicy(pk.APIVersion, pk.Kind)
	bindingKind := vap.IsBinding(pk.APIVersion, pk.Kind)
	mutatingKind := mpol.Policies.IsPolicy(pk.APIVersion, pk.Kind)
	imageValidatingKind := ivpol.Policies.IsPolicy(pk.APIVersion, pk.Kind)
	genOrDelCompile, genOrDelKind := generatingOrDeleting(pk.APIVersion, pk.Kind) // gpol.go
	known := policyKind || exceptionKind || validatingKind || celExceptionKind || vapKind || bindingKind || mutatingKind || imageValidatingKind || genOrDelKind
	if !known && !otherPolicyKinds[pk.Kind] {
		return nil, nil
	}
	if pk.Metadata.Name == "" {
		return nil, fmt.Errorf("%s without metadata.name", pk.Kind)
	}
	namespacedKind := pk.Kind == kyverno.KindPolicy || pk.Kind == vpol.KindNamespacedValidatingPolicy || pk.Kind == mpol.KindNamespacedMutatingPolicy || pk.Kind == ivpol.KindNamespacedImageValidatingPolicy || genOrDelKind && !clusterWide(pk.Kind)
	if namespacedKind && pk.Metadata.Namespace == "" {
		return nil, fmt.Errorf("metadata.namespace is required for %s %s", pk.Kind, pk.Metadata.Name)
	}
	if pk.Kind == kyverno.KindClusterPolicy || pk.Kind == vpol.KindValidatingPolicy || pk.Kind == mpol.KindMutatingPolicy || pk.Kind == ivpol.KindImageValidatingPolicy || vapKind || bindingKind || clusterWide(pk.Kind) {
		pk.Metadata.Namespace = ""
	}
	e := &entry{
		group:     group,
		kind:      pk.Kind,
		namespace: pk.Metadata.Namespace,
		name:      pk.Metadata.Name,
		labels:    pk.Metadata.Labels,
		origin:    origin(d),
		file:      d.Origin,
		docHash:   sha256Hex(d.JSON),
		json:      d.JSON,
	}
	old := prev[e.identity()]
	if old != nil && old.docHash == e.docHash {
		if old.origin != e.origin {
			moved := *old
			moved.origin, moved.file = e.origin, e.file
			return &moved, nil
		}
		return old, nil
	}
	if !known {
		e.errs = []*engine.Error{engine.Errorf(engine.CodeUnsupported, "kind", pk.Kind+" policies are not supported yet")}
		return e, nil
	}
	var err error
	switch {
	case exceptionKind:
		e.exception, err = compileException(e.origin, d.JSON)
	case celExceptionKind:
		e.celException, err = compileCELException(e.origin, d.JSON)
	case bindingKind:
		e.binding, err = compileBinding(e.origin, d.JSON)
	default:
		compile := compileDocuments
		switch {
		case validatingKind:
			compile = compileValidating
		case vapKind:
			compile = compileVAP
		case mutatingKind:
			compile = compileMutating
		case imageValidatingKind:
			compile = compileImageValidating
		case genOrDelKind:
			compile = genOrDelCompile
		}
		// A source's update has no deadline: get fails only on a done
		// context.
		v, _ := s.cache.get(context.Background(), cacheKey{identity: e.identity(), hash: e.docHash}, func() *compiled {
			ps, err := compile(e.origin, d.JSON)
			return &compiled{policies: ps, err: err}
		})
		ps := v.policies
		err = v.err
		if err == nil && len(ps) != 1 {
			err = engine.Errorf(engine.CodeDecode, "", fmt.Sprintf("document holds %d policies, want 1", len(ps)))
		}
		if err == nil {
			e.policy = ps[0]
		}
	}
	switch {
	case err == nil:
		e.servedJSON = d.JSON
		verb := "policy loaded"
		if old != nil {
			verb = "policy updated"
		}
		s.log.Info(verb, "policy", e.kind+" "+e.key(), "source", e.origin, "hash", shortHash(e.contentHash()))
	case old != nil && old.ready():
		e.errs = policyErrors(err)
		e.policy, e.exception, e.celException, e.binding, e.servedJSON = old.policy, old.exception, old.celException, old.binding, old.servedJSON
		s.log.Warn("policy does not compile; keeping the previous version", "policy", e.kind+" "+e.key(), "source", e.origin, "error", err)
	default:
		e.errs = policyErrors(err)
		s.log.Warn("policy does not compile", "policy", e.kind+" "+e.key(), "source", e.origin, "error", err)
	}
	return e, nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// kindPolicyException is the kind of kyverno.io PolicyExceptions.
const kindPolicyException = "PolicyException"

// compileException decodes and compiles the one PolicyException of data.
func compileException(source string, data []byte) (*policy.Exception, error) {
	return compileOne(source, data, "policy exceptions", kyverno.DecodeExceptions, policy.CompileException) // gpol.go
}

// compileCELException decodes and compiles the one policies.kyverno.io
// PolicyException of data.
func compileCELException(source string, data []byte) (*vpol.Exception, error) {
	return compileOne(source, data, "policy exceptions", vpol.DecodeExceptions, vpol.CompileException)
}

// compileValidating decodes and compiles every ValidatingPolicy and
// NamespacedValidatingPolicy of data.
var compileValidating = compilerOf(vpol.Decode, policy.CompileValidating) // gpol.go

// compileMutating decodes and compiles every MutatingPolicy and
// NamespacedMutatingPolicy of data.
var compileMutating = compilerOf(mpol.Policies.Decode, policy.CompileMutating) // gpol.go

// compileImageValidating decodes and compiles every ImageValidatingPolicy
// and NamespacedImageValidatingPolicy of data.
var compileImageValidating = compilerOf(ivpol.Policies.Decode, policy.CompileImageValidating) // gpol.go

// compileVAP decodes and compiles every ValidatingAdmissionPolicy of
// data.
var compileVAP = compilerOf(vap.Decode, policy.CompileVAP) // gpol.go

// compileBinding decodes and compiles the one
// ValidatingAdmissionPolicyBinding of data.
func compileBinding(source string, data []byte) (*vap.Binding, error) {
	return compileOne(source, data, "bindings", vap.DecodeBindings, vap.CompileBinding)
}

// contentHash is the hash of the version in use: the engine's policy hash
// for a policy, the document's SHA-256 for an exception or a binding.
func (e *entry) contentHash() string {
	switch {
	case e.policy != nil:
		return e.policy.Hash()
	case e.exception != nil, e.celException != nil, e.binding != nil:
		return sha256Hex(e.servedJSON)
	}
	return ""
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// compileDocuments decodes and compiles every policy of data.
var compileDocuments = compilerOf(kyverno.DecodePolicies, policy.Compile) // gpol.go

// policyErrors returns the engine errors of err, or err as one error.
func policyErrors(err error) []*engine.Error {
	if es := engine.As(err); len(es) > 0 {
		return es
	}
	var es []*engine.Error
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			es = append(es, engine.As(e)...)
		}
	}
	if len(es) > 0 {
		return es
	}
	return []*engine.Error{{Code: engine.CodeDecode, Message: err.Error(), Err: err}}
}

func sourceError(source string, code engine.Code, err error) *verdictv1.SourceError {
	se := &verdictv1.SourceError{Source: source}
	if es := engine.As(err); len(es) > 0 {
		for _, e := range es {
			se.Errors = append(se.Errors, &verdictv1.PolicyError{Code: string(e.Code), Path: e.Path, Message: e.Message})
		}
		return se
	}
	se.Errors = []*verdictv1.PolicyError{{Code: string(code), Message: err.Error()}}
	return se
}

// publish builds the policy set from every source's entries. The caller
// holds s.mu.
func (s *Store) publish() {
	set := &policySet{byKey: map[string]*entry{}, byIdentity: map[string]*entry{}}
	ready, invalid := 0, 0
	for _, src := range s.sources {
		st := s.states[src.Name()]
		set.sourceErrors = append(set.sourceErrors, st.errors...)
		for _, k := range slices.Sorted(maps.Keys(st.entries)) {
			e := st.entries[k]
			if first, dup := set.byIdentity[k]; dup {
				err := fmt.Errorf("%s %s is also defined at %s, which is used", e.kind, e.key(), first.origin)
				set.sourceErrors = append(set.sourceErrors, sourceError(e.origin, CodeDuplicatePolicy, err))
				continue
			}
			if e.kind != kindPolicyException && e.kind != vap.KindBinding {
				// Requests, GetPolicy and reports name a policy by
				// namespace and name only: a ValidatingPolicy with the
				// key of a ClusterPolicy (a NamespacedValidatingPolicy
				// with that of a Policy) is not served. The kyverno.io
				// one, whose identity sorts first, is used.
				if first, dup := set.byKey[e.key()]; dup {
					err := fmt.Errorf("%s %s has the name of %s %s (defined at %s), which is used: policies are named by namespace and name", e.kind, e.key(), first.kind, first.key(), first.origin)
					set.sourceErrors = append(set.sourceErrors, sourceError(e.origin, CodeDuplicatePolicy, err))
					continue
				}
				set.byKey[e.key()] = e
			}
			set.byIdentity[k] = e
			set.entries = append(set.entries, e)
			if len(e.errs) > 0 {
				invalid++
			}
			if e.ready() {
				ready++
			}
		}
	}
	sort.Slice(set.entries, func(i, j int) bool { return entryLess(set.entries[i], set.entries[j]) })
	for _, e := range set.entries {
		if e.policy != nil {
			set.policies = append(set.policies, e.policy)
		}
		if e.exception != nil {
			set.exceptions = append(set.exceptions, e.exception)
		}
		if e.celException != nil {
			set.celExceptions = append(set.celExceptions, e.celException)
		}
		if e.binding != nil {
			if _, off := e.labels[policy.LabelReportsDisabled]; !off {
				set.vapBindings = append(set.vapBindings, e.binding)
			}
		}
	}
	s.metrics.policies.WithLabelValues("ready").Set(float64(ready))
	s.metrics.policies.WithLabelValues("invalid").Set(float64(invalid))
	s.metrics.sourceErrors.Set(float64(len(set.sourceErrors)))
	s.metrics.kyverno.changed(s.set.Load(), set, s.metrics.limits.namespaces.Counted)
	s.set.Store(set)
}

func entryLess(a, b *entry) bool {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.group, b.group),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name)) < 0
}

// selectPolicies returns the policies in use that sel picks (all of them
// for a nil selector). A name the store does not hold is an error naming
// the selector field.
func (set *policySet) selectPolicies(sel *verdictv1.PolicySelector) ([]*policy.Policy, error) {
	fp := sel.GetFailurePolicy()
	if sel == nil || (len(sel.GetNames()) == 0 && len(sel.GetLabels()) == 0 && fp == verdictv1.FailurePolicy_FAILURE_POLICY_UNSPECIFIED) {
		return set.policies, nil
	}
	var picked []*entry
	if names := sel.GetNames(); len(names) > 0 {
		var missing []*verdictv1.FieldViolation
		for i, n := range names {
			e := set.byKey[n]
			if e == nil || e.policy == nil {
				missing = append(missing, &verdictv1.FieldViolation{
					Field:       fmt.Sprintf("policy_selector.names[%d]", i),
					Description: fmt.Sprintf("the server holds no usable policy %q", n),
					Reason:      reasonNotFound,
				})
				continue
			}
			picked = append(picked, e)
		}
		if len(missing) > 0 {
			return nil, &notFoundError{violations: missing}
		}
		sort.Slice(picked, func(i, j int) bool { return entryLess(picked[i], picked[j]) })
	} else {
		picked = set.entries
	}
	out := make([]*policy.Policy, 0, len(picked))
	seen := make(map[*policy.Policy]bool, len(picked))
	for _, e := range picked {
		if e.policy == nil || seen[e.policy] || !hasLabels(e.labels, sel.GetLabels()) || !hasFailurePolicy(e.policy, fp) {
			continue
		}
		seen[e.policy] = true
		out = append(out, e.policy)
	}
	return out, nil
}

// hasFailurePolicy reports whether p's failure policy is want (any, when
// want is unspecified), read as Kyverno's Spec.GetFailurePolicy does:
// webhookConfiguration.failurePolicy, else failurePolicy, else Fail.
func hasFailurePolicy(p *policy.Policy, want verdictv1.FailurePolicy) bool {
	if want == verdictv1.FailurePolicy_FAILURE_POLICY_UNSPECIFIED {
		return true
	}
	var ignore bool
	switch {
	case p.Validating != nil:
		ignore = p.Validating.FailurePolicyIgnore
	case p.Mutating != nil:
		ignore = p.Mutating.FailurePolicyIgnore
	case p.ImageValidating != nil:
		ignore = p.ImageValidating.FailurePolicyIgnore
	case p.VAP != nil:
		ignore = p.VAP.FailurePolicyIgnore
	default:
		spec := p.Document().Spec
		fp := spec.FailurePolicy
		if wc := spec.WebhookConfiguration; wc != nil && wc.FailurePolicy != "" {
			fp = wc.FailurePolicy
		}
		ignore = fp == "Ignore"
	}
	if ignore {
		return want == verdictv1.FailurePolicy_FAILURE_POLICY_IGNORE
	}
	return want == verdictv1.FailurePolicy_FAILURE_POLICY_FAIL
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// info describes an entry for ListPolicies and GetPolicy.
func (e *entry) info() *verdictv1.PolicyInfo {
	pi := &verdictv1.PolicyInfo{
		Kind:        e.kind,
		Namespace:   e.namespace,
		Name:        e.name,
		Source:      e.origin,
		Ready:       e.ready(),
		ContentHash: e.contentHash(),
		Labels:      e.labels,
	}
	if e.policy != nil {
		pi.Background = e.policy.Background
		for _, r := range e.policy.Rules {
			pi.Rules = append(pi.Rules, r.Name)
		}
		if e.policy.VAP != nil {
			// Its one result is named after it, as in Kyverno.
			pi.Rules = []string{e.name}
		}
		sc := e.policy.Scopes()
		pi.BackgroundScan, pi.GenerateExisting, pi.MutateExisting = scanScope(sc.Background), scanScope(sc.GenerateExisting), scanScope(sc.MutateExisting)
	}
	for _, er := range e.errs {
		pi.Errors = append(pi.Errors, &verdictv1.PolicyError{Code: string(er.Code), Path: er.Path, Message: er.Message})
	}
	return pi
}
