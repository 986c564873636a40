package pattern

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine"
)

// Status is the outcome of matching a resource against a pattern.
type Status int

const (
	// Pass: the resource matches.
	Pass Status = iota
	// Fail: the resource does not match; Result.Path says where.
	Fail
	// Skip: a conditional or global anchor does not hold, so the rule does
	// not apply. Kyverno reports the rule as skipped with Result.Message.
	Skip
	// Error: the resource does not match and Kyverno has no path to report,
	// because a condition or existence anchor key was missing from the
	// resource, or a list pattern was longer than the resource list. Kyverno
	// reports the rule as an error ("execution error: " + Result.Message).
	Error
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	case Error:
		return "error"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Result is the outcome of Pattern.Validate.
type Result struct {
	Status Status
	// Path is where the resource failed, exactly as Kyverno prints it in
	// "rule X failed at path /spec/containers/0/image/"; set for Fail only.
	Path string
	// Message is Kyverno's error text: for Skip the message Kyverno reports
	// (e.g. "conditional anchor mismatch: resource value 'foo' does not
	// match 'nginx' at path /spec/containers/0/name/"), for Error the text
	// after "execution error: ", for Fail the detail Kyverno logs.
	Message string
}

// The texts Kyverno's anchor errors start with. Kyverno tells skips from
// failures by searching error texts for them.
const (
	negationMsg    = "negation anchor matched in resource"
	conditionalMsg = "conditional anchor mismatch"
	globalMsg      = "global anchor mismatch"
)

type errKind uint8

const (
	errPlain       errKind = iota // any other error
	errConditional                // a conditional anchor did not hold
	errGlobal                     // a global anchor did not hold
	errNegation                   // a negated key was present
	errSkipped                    // Kyverno's PatternError{Skip: true}: all of a map or list skipped
)

// matchErr mirrors the error values of Kyverno's validate package: their
// type and text drive the skip/fail decisions.
type matchErr struct {
	kind errKind
	msg  string
}

// newErr returns an error from the state's slab: errors live only until
// Validate returns, and the state is pooled, so most cost no allocation.
func (st *state) newErr(kind errKind, msg string) *matchErr {
	if st.nerr < len(st.errBuf) {
		e := &st.errBuf[st.nerr]
		st.nerr++
		e.kind, e.msg = kind, msg
		return e
	}
	return &matchErr{kind: kind, msg: msg}
}

func (st *state) plainErr(msg string) *matchErr { return st.newErr(errPlain, msg) }

// stopped is the error of an element met once the budget is spent: a plain
// error, so that no caller takes it for a skip; Validate reports the
// budget's error instead.
func (st *state) stopped() *matchErr { return st.newErr(errPlain, "evaluation stopped") }

// skips is Kyverno's validate.skip: anchor errors by type, others by text.
func (e *matchErr) skips() bool {
	switch e.kind {
	case errConditional, errGlobal:
		return true
	case errNegation:
		return false
	}
	return strings.Contains(e.msg, conditionalMsg) || strings.Contains(e.msg, globalMsg)
}

// fails is Kyverno's validate.fail.
func (e *matchErr) fails() bool {
	switch e.kind {
	case errNegation:
		return true
	case errConditional, errGlobal:
		return false
	}
	return strings.Contains(e.msg, negationMsg)
}

// combineSkips is Kyverno's &PatternError{Err: multierr.Combine(errs...), Skip: true}.
func (st *state) combineSkips(errs []*matchErr) *matchErr {
	if len(errs) == 1 {
		return st.newErr(errSkipped, errs[0].msg)
	}
	n := 2 * (len(errs) - 1)
	for _, e := range errs {
		n += len(e.msg)
	}
	var b strings.Builder
	b.Grow(n)
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.msg)
	}
	return st.newErr(errSkipped, b.String())
}

// anySkipNotSkipped reports whether one of the skip errors came straight
// from an anchor of this map rather than from a skipped child (Kyverno's
// skipSiblingExists).
func anySkipNotSkipped(errs []*matchErr) bool {
	for _, e := range errs {
		if e.kind != errSkipped {
			return true
		}
	}
	return false
}

// seg is one step of a path inside the resource: a key, or an index when
// idx >= 0.
type seg struct {
	key string
	idx int
}

// pathString renders the current resource path in Kyverno's form: "/"
// followed by each key or index and a "/".
func (st *state) pathString() string {
	var b strings.Builder
	b.Grow(st.pathLen())
	st.writePath(&b)
	return b.String()
}

// pathLen is the length of pathString.
func (st *state) pathLen() int {
	n := 1
	for _, s := range st.path {
		if s.idx >= 0 {
			n += intLen(s.idx)
		} else {
			n += len(s.key)
		}
		n++
	}
	return n
}

func (st *state) writePath(b *strings.Builder) {
	var num [20]byte
	b.WriteByte('/')
	for _, s := range st.path {
		if s.idx >= 0 {
			b.Write(strconv.AppendInt(num[:0], int64(s.idx), 10))
		} else {
			b.WriteString(s.key)
		}
		b.WriteByte('/')
	}
}

// intLen is the length of the decimal form of a non-negative int.
func intLen(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// errAt returns a plain error whose text is the concatenation of pre, the
// current path and post, built in one allocation, and the path, which is a
// part of that text.
func (st *state) errAt(pre []string, post ...string) (string, *matchErr) {
	start, end := 0, 0
	for _, p := range pre {
		start += len(p)
	}
	end = start + st.pathLen()
	n := end
	for _, p := range post {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range pre {
		b.WriteString(p)
	}
	st.writePath(&b)
	for _, p := range post {
		b.WriteString(p)
	}
	msg := b.String()
	return msg[start:end], st.plainErr(msg)
}

func (st *state) pushKey(key string) { st.path = append(st.path, seg{key: key, idx: -1}) }
func (st *state) pushIndex(i int)    { st.path = append(st.path, seg{idx: i}) }
func (st *state) pop()               { st.path = st.path[:len(st.path)-1] }

// state is what one Validate call accumulates.
type state struct {
	p *Pattern
	// budget is charged one step per resource node visited (nil: no
	// limit); once it is spent every element fails at once and Validate
	// reports the budget's error.
	budget *engine.Budget
	// found holds, per tracked anchor key: 0 not met, 1 met but absent from
	// the resource, 2 present in the resource at least once.
	found []uint8
	buf   [16]uint8
	// overrides replaces labels/annotations nodes after wildcard key
	// expansion; Kyverno mutates its pattern in place for the rest of the
	// evaluation.
	overrides map[*node]*node
	// dynamic numbers the anchor keys first met in expanded maps.
	dynamic map[string]int
	// path is the resource path being matched, rendered only on failure.
	path    []seg
	pathBuf [16]seg
	// errBuf holds the first errors of the call (see newErr).
	errBuf [8]matchErr
	nerr   int
}

// states are the states of finished Validate calls: a state is about
// 700 bytes, and a policy set validates dozens of patterns per resource.
var states = sync.Pool{New: func() any { return new(state) }}

// Validate matches a resource (a JSON-decoded value) against the pattern,
// with Kyverno's semantics: see the package documentation.
func (p *Pattern) Validate(resource any) Result {
	return p.ValidateBudget(resource, nil)
}

// ValidateBudget is Validate charging b with one step per resource node
// visited and with the work of wildcard matches (nil: no limit). When b is
// spent or its context is done, matching stops and the result is Error,
// with b's error as Message; b.Err() returns it.
func (p *Pattern) ValidateBudget(resource any, b *engine.Budget) Result {
	st := states.Get().(*state)
	defer states.Put(st)
	*st = state{p: p, budget: b}
	st.path = st.pathBuf[:0]
	if n := len(p.tracked); n <= len(st.buf) {
		st.found = st.buf[:n]
	} else {
		st.found = make([]uint8, n)
	}
	path, err := st.element(resource, p.root)
	if berr := b.Err(); berr != nil {
		return Result{Status: Error, Message: berr.Error()}
	}
	if err == nil {
		return Result{Status: Pass}
	}
	if err.skips() {
		return Result{Status: Skip, Message: err.msg}
	}
	if !err.fails() && st.keysMissing() {
		return Result{Status: Error, Message: err.msg}
	}
	if path == "" {
		return Result{Status: Error, Message: err.msg}
	}
	return Result{Status: Fail, Path: path, Message: err.msg}
}

// keysMissing is Kyverno's AnchorMap.KeysAreMissing.
func (st *state) keysMissing() bool {
	for _, f := range st.found {
		if f == 1 {
			return true
		}
	}
	return false
}

// noteAnchors is Kyverno's AnchorMap.CheckAnchorInResource.
func (st *state) noteAnchors(pn *node, rm map[string]any) {
	for _, e := range pn.tracked {
		id := e.track
		if st.found[id] == 2 {
			continue
		}
		st.found[id] = 1
		if _, ok := rm[e.name]; ok {
			st.found[id] = 2
		}
	}
}

func (st *state) resolve(n *node) *node {
	if st.overrides != nil {
		if o, ok := st.overrides[n]; ok {
			return o
		}
	}
	return n
}

// element is Kyverno's validateResourceElement, at the current path. It
// charges one step to the budget.
func (st *state) element(res any, pn *node) (string, *matchErr) {
	if st.budget.Step(1) != nil {
		return "", st.stopped()
	}
	switch pn.kind {
	case nMap:
		rm, ok := res.(map[string]any)
		if !ok {
			return st.errAt([]string{"pattern and resource have different structures. Path: "}, ". Expected map[string]interface {}, found ", typeName(res))
		}
		st.noteAnchors(pn, rm)
		return st.mapElement(rm, pn)
	case nList:
		ra, ok := res.([]any)
		if !ok {
			return st.errAt([]string{"validation rule failed at path "}, ", resource does not satisfy the expected overlay pattern")
		}
		return st.listElement(ra, pn)
	case nScalar:
		if ra, ok := res.([]any); ok {
			for _, e := range ra {
				if st.budget.Step(1) != nil {
					return "", st.stopped()
				}
				if !pn.sc.match(e, st.budget) {
					return st.mismatch(res, pn)
				}
			}
			return "", nil
		}
		if !pn.sc.match(res, st.budget) {
			return st.mismatch(res, pn)
		}
		return "", nil
	}
	return st.errAt([]string{"failed at '"}, "', pattern contains unknown type")
}

func (st *state) mismatch(res any, pn *node) (string, *matchErr) {
	return st.errAt([]string{"resource value '", renderValue(res), "' does not match '", sprint(pn.raw), "' at path "})
}

// child matches a resource value against a pattern one key deeper.
func (st *state) child(key string, res any, pn *node) (string, *matchErr) {
	st.pushKey(key)
	p, err := st.element(res, pn)
	st.pop()
	return p, err
}

// mapElement is Kyverno's validateMap: anchors first (sorted by key), then
// the other keys.
func (st *state) mapElement(rm map[string]any, pn *node) (string, *matchErr) {
	if pn.meta != nil {
		st.expandMetadata(pn.meta, rm)
	}
	var skipErrs []*matchErr
	applied := 0
	for _, e := range pn.anchors {
		hp, err := st.handle(e, rm)
		if err != nil {
			if err.skips() {
				skipErrs = append(skipErrs, err)
				continue
			}
			if !anySkipNotSkipped(skipErrs) {
				return hp, err
			}
			// Kyverno drops the error when a sibling condition already
			// failed: the map is skipped below.
			continue
		}
		applied++
	}
	if len(skipErrs) > 0 && (applied == 0 || anySkipNotSkipped(skipErrs)) {
		return st.pathString(), st.combineSkips(skipErrs)
	}
	for _, e := range st.restOf(pn) {
		if hp, err := st.handle(e, rm); err != nil {
			return hp, err
		}
	}
	return "", nil
}

// keyPath renders the current path with one more key.
func (st *state) keyPath(key string) string {
	st.pushKey(key)
	s := st.pathString()
	st.pop()
	return s
}

// handle runs the handler of one key (Kyverno's CreateElementHandler).
func (st *state) handle(e *entry, rm map[string]any) (string, *matchErr) {
	switch e.kind {
	case anchorCondition:
		v, ok := rm[e.name]
		if !ok {
			return st.keyPath(e.name), st.newErr(errConditional, conditionalMsg+": conditional anchor key doesn't exist in the resource")
		}
		if rp, err := st.child(e.name, v, st.resolve(e.val)); err != nil {
			return rp, st.newErr(errConditional, conditionalMsg+": "+err.msg)
		}
		return "", nil
	case anchorGlobal:
		v, ok := rm[e.name]
		if !ok {
			return "", nil
		}
		if rp, err := st.child(e.name, v, st.resolve(e.val)); err != nil {
			return rp, st.newErr(errGlobal, globalMsg+": "+err.msg)
		}
		return "", nil
	case anchorEquality:
		v, ok := rm[e.name]
		if !ok {
			return "", nil
		}
		return st.child(e.name, v, st.resolve(e.val))
	case anchorNegation:
		if _, ok := rm[e.name]; !ok {
			return "", nil
		}
		st.pushKey(e.name)
		cps, err := st.errAt([]string{negationMsg + ": "}, " is not allowed")
		st.pop()
		err.kind = errNegation
		return cps, err
	case anchorExistence:
		v, ok := rm[e.name]
		if !ok {
			return "", nil
		}
		st.pushKey(e.name)
		p, err := st.existence(v, st.resolve(e.val))
		st.pop()
		return p, err
	}
	// A plain key; also +(key), which validate does not interpret.
	pv := st.resolve(e.val)
	if pv.star {
		if rm[e.key] != nil {
			return "", nil
		}
		return st.errAt(nil, "/", e.key, " not found")
	}
	return st.child(e.key, rm[e.key], pv)
}

// existence is Kyverno's existenceHandler: every map of the pattern list must
// match at least one element of the resource list.
func (st *state) existence(v any, pv *node) (string, *matchErr) {
	ra, ok := v.([]any)
	if !ok {
		return st.pathString(), st.plainErr("invalid resource type " + typeName(v) + ": Existence ^ () anchor can be used only on list/array type resource")
	}
	if pv.kind != nList {
		return st.pathString(), st.plainErr("invalid pattern type " + patternTypeName(pv) + ": Pattern has to be of list to compare against resource")
	}
	for _, pm := range pv.elems {
		if pm.kind != nMap {
			return st.pathString(), st.plainErr("invalid pattern type []interface {}: Pattern has to be of type map to compare against items in resource")
		}
		if !st.anyMatches(ra, pm) {
			return st.errAt([]string{"existence anchor validation failed at path "})
		}
	}
	return "", nil
}

func (st *state) anyMatches(ra []any, pm *node) bool {
	for i, re := range ra {
		if st.budget.Err() != nil {
			return false
		}
		st.pushIndex(i)
		_, err := st.element(re, pm)
		st.pop()
		if err == nil {
			return true
		}
	}
	return false
}

// patternTypeName prints the Go type Kyverno would report for a pattern.
func patternTypeName(n *node) string {
	switch n.kind {
	case nMap:
		return "map[string]interface {}"
	case nList:
		return "[]interface {}"
	case nScalar:
		if n.sc.kind == pNil {
			return "<nil>"
		}
	}
	return fmt.Sprintf("%T", n.raw)
}

// listElement is Kyverno's validateArray.
func (st *state) listElement(ra []any, pn *node) (string, *matchErr) {
	if len(pn.elems) == 0 {
		return st.pathString(), st.plainErr("pattern Array empty")
	}
	switch first := pn.elems[0]; first.kind {
	case nMap:
		// Only the first map counts: each resource element must match it.
		return st.eachMatches(ra, first)
	case nScalar:
		return st.element(ra, first)
	}
	if len(ra) < len(pn.elems) {
		return "", st.plainErr(fmt.Sprintf("validate Array failed, array length mismatch, resource Array len is %d and pattern Array len is %d", len(ra), len(pn.elems)))
	}
	return st.elements(ra[:len(pn.elems)], func(i int) *node { return pn.elems[i] })
}

// eachMatches is Kyverno's validateArrayOfMaps.
func (st *state) eachMatches(ra []any, pm *node) (string, *matchErr) {
	return st.elements(ra, func(int) *node { return pm })
}

// elements matches each element ra[i] against pattern(i): the first
// failure that is not a skip is the result; when every element skips,
// their skips combined are.
func (st *state) elements(ra []any, pattern func(i int) *node) (string, *matchErr) {
	var skipErrs []*matchErr
	applied := 0
	for i, re := range ra {
		st.pushIndex(i)
		ep, err := st.element(re, pattern(i))
		st.pop()
		if err != nil {
			if err.skips() {
				skipErrs = append(skipErrs, err)
				continue
			}
			return ep, err
		}
		applied++
	}
	if applied == 0 && len(skipErrs) > 0 {
		return st.pathString(), st.combineSkips(skipErrs)
	}
	return "", nil
}
