package pattern

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// Pattern is a compiled validate pattern: anchors, operators, wildcards and
// numbers are parsed once. It is immutable and safe for concurrent use.
type Pattern struct {
	root *node
	// tracked numbers the condition and existence anchor keys, which Kyverno
	// records to tell a failure (all keys seen) from an error (a key missing
	// from the resource).
	tracked map[string]int
}

type nodeKind uint8

const (
	nScalar nodeKind = iota
	nMap
	nList
	nUnknown // a Go value that is not JSON; fails wherever it is matched
)

// node is one compiled pattern element.
type node struct {
	kind nodeKind
	raw  any // the pattern value, numbers as int64 or float64, for messages

	// nMap
	anchors []*entry // condition, existence, equality, negation: sorted by key
	rest    []*entry // plain and global keys, in Kyverno's evaluation order
	tracked []*entry // condition and existence anchors
	// meta is the entry holding "metadata" (or an anchor on it); labels and
	// annotations hold "labels" and "annotations": Kyverno expands wildcard
	// keys under metadata.labels and metadata.annotations.
	meta, labels, annotations *entry
	// needsExpand: as labels or annotations, expansion would change this map
	// (a key holds a wildcard or a value is not a string).
	needsExpand bool

	// nList
	elems []*node

	// nScalar
	sc   scalar
	star bool // the string "*", which a plain key treats as "present"

	nested bool // the element holds an anchor at any depth
}

// entry is one key of a map pattern.
type entry struct {
	key   string     // as written
	kind  anchorKind // anchorNone for a plain key
	name  string     // the key to look up in the resource
	val   *node
	track int // index into Pattern.tracked, or -1
}

// Compile checks a pattern the way Kyverno's policy validation does and
// compiles it. p is a JSON-decoded value (map[string]any, []any, string,
// float64, bool, nil; int, int64 and json.Number are read as numbers).
//
// The errors Kyverno reports when a policy is created have code
// engine.CodeInvalidPattern and a Path inside the pattern, such as
// "spec.containers[0].+(image)" (join it to the pattern's own path, e.g.
// "spec.rules[0].validate.pattern"): an anchor other than (), =(), ^(), X()
// and <() (notably the mutate-only +()), an existence anchor ^() whose value
// is not a non-empty list, a value that is not JSON, and a non-string value
// under metadata.labels or metadata.annotations (also under
// spec.template.metadata) at the top of the pattern. Kyverno does not
// check operators: a string that is not a valid comparison is matched as a
// plain wildcard string, and so it is here. One problem is returned as an
// *engine.Error, several as engine.Errors sorted by path; read both with
// engine.As.
//
// $(...) references must be resolved first (engine/variables does), before
// any {{ }} variable is substituted.
func Compile(p any) (*Pattern, error) {
	var errs engine.Errors
	c := compiler{check: true, errs: &errs, tracked: map[string]int{}}
	root := c.node(p, nil)
	c.checkMetadataStrings(p)
	if len(errs) == 1 {
		return nil, errs[0]
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return &Pattern{root: root, tracked: c.tracked}, nil
}

// CompileSubstituted compiles a pattern into which {{ }} variables were
// substituted at evaluation time. It skips Compile's checks, which Kyverno
// applies only to the policy as written: a key that only becomes "+(x)"
// after substitution is matched as the plain key "+(x)", as in Kyverno, and
// an existence anchor whose value is not a list fails at evaluation.
func CompileSubstituted(p any) *Pattern {
	c := compiler{tracked: map[string]int{}}
	root := c.node(p, nil)
	return &Pattern{root: root, tracked: c.tracked}
}

// compiler builds nodes and, when check is set, reports what Kyverno's
// policy validation rejects.
type compiler struct {
	check   bool
	errs    *engine.Errors
	tracked map[string]int
	// track assigns ids to anchor keys met after compilation (in expanded
	// labels); nil while compiling.
	track func(key string) int
}

// cpath is a path inside the pattern, built only when reporting an error.
type cpath struct {
	parent *cpath
	key    string
	idx    int // -1 for a key
}

func (p *cpath) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	if p.idx >= 0 {
		return parent + "[" + strconv.Itoa(p.idx) + "]"
	}
	if parent == "" {
		return p.key
	}
	return parent + "." + p.key
}

func (c *compiler) fail(path *cpath, msg string) {
	*c.errs = append(*c.errs, engine.Errorf(engine.CodeInvalidPattern, path.String(), msg))
}

func (c *compiler) node(v any, path *cpath) *node {
	switch t := v.(type) {
	case map[string]any:
		return c.mapNode(t, path)
	case []any:
		n := &node{kind: nList, raw: t, elems: make([]*node, len(t))}
		for i, e := range t {
			n.elems[i] = c.node(e, &cpath{parent: path, idx: i})
			n.nested = n.nested || n.elems[i].nested
		}
		return n
	case nil:
		return &node{kind: nScalar, sc: scalar{kind: pNil}}
	case string:
		return &node{kind: nScalar, raw: t, sc: newStringScalar(t), star: t == "*"}
	case bool:
		return &node{kind: nScalar, raw: t, sc: scalar{kind: pBool, b: t}}
	}
	if num, ok := patternNumber(v); ok {
		if i, ok := num.(int64); ok {
			return &node{kind: nScalar, raw: i, sc: scalar{kind: pInt, i: i}}
		}
		f := num.(float64)
		return &node{kind: nScalar, raw: f, sc: scalar{kind: pFloat, f: f}}
	}
	if c.check {
		c.fail(path, "pattern contains unknown type "+fmt.Sprintf("%T", v))
	}
	return &node{kind: nUnknown, raw: v}
}

func (c *compiler) mapNode(m map[string]any, path *cpath) *node {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := &node{kind: nMap, raw: m}
	var front, back []*entry
	for _, k := range keys {
		v := m[k]
		kind, name := parseAnchor(k)
		if kind == anchorNone {
			name = k
		}
		if _, ok := v.(string); !ok {
			n.needsExpand = true
		}
		if wildcard.Has(k) {
			n.needsExpand = true
		}
		kpath := &cpath{parent: path, key: k, idx: -1}
		if c.check && kind != anchorNone {
			if !validateAnchor(kind) {
				c.fail(kpath, "unsupported anchor "+k)
			} else if kind == anchorExistence {
				if l, ok := v.([]any); !ok {
					c.fail(kpath, "existence anchor should have value of type list")
				} else if len(l) == 0 {
					c.fail(kpath, "existence anchor: should have at least one value")
				}
			}
		}
		e := &entry{key: k, kind: kind, name: name, val: c.node(v, kpath), track: -1}
		if e.val.nested {
			n.nested = true
		}
		switch kind {
		case anchorCondition, anchorExistence, anchorEquality, anchorNegation:
			n.nested = true
			n.anchors = append(n.anchors, e)
			if kind != anchorEquality && kind != anchorNegation {
				e.track = c.trackID(k)
				n.tracked = append(n.tracked, e)
			}
		case anchorGlobal:
			n.nested = true
			front = append(front, e)
		default:
			if e.val.nested {
				front = append(front, e)
			} else {
				back = append(back, e)
			}
		}
		n.meta = pickTagEntry(n.meta, e, "metadata")
		n.labels = pickTagEntry(n.labels, e, "labels")
		n.annotations = pickTagEntry(n.annotations, e, "annotations")
	}
	n.rest = restOrder(front, back)
	return n
}

// restOrder is Kyverno's getSortedNestedAnchorResource: walking sorted keys,
// global anchors and values with nested anchors are pushed to the front of a
// list, the others to its back; so the front part ends up in reverse order.
func restOrder(front, back []*entry) []*entry {
	out := make([]*entry, 0, len(front)+len(back))
	for i := len(front) - 1; i >= 0; i-- {
		out = append(out, front[i])
	}
	return append(out, back...)
}

// pickTagEntry keeps the entry Kyverno's getPatternValue would find for tag:
// the key itself, or an anchor on it. Kyverno takes whichever comes first in
// Go's random map order; Verdict prefers the plain key, then the smallest
// anchored key.
func pickTagEntry(cur, e *entry, tag string) *entry {
	if e.key == tag {
		return e
	}
	if e.kind == anchorNone || e.name != tag {
		return cur
	}
	if cur == nil {
		return e
	}
	return cur // keys arrive sorted: cur is the plain key or a smaller one
}

func (c *compiler) trackID(key string) int {
	if id, ok := c.tracked[key]; ok {
		return id
	}
	if c.track != nil {
		return c.track(key)
	}
	id := len(c.tracked)
	c.tracked[key] = id
	return id
}

// labelsMsg is Kyverno's policy validation error for non-string label or
// annotation values.
const labelsMsg = `labels and annotations supports only string values, "use double quotes around the non string values"`

// checkMetadataStrings is Kyverno's isLabelAndAnnotationsString: the values
// under metadata.labels, metadata.annotations and the same under
// spec.template.metadata must be strings. Kyverno checks only one of
// metadata and spec (whichever its random map walk meets first); Verdict
// checks both.
func (c *compiler) checkMetadataStrings(p any) {
	m, ok := p.(map[string]any)
	if !ok {
		return
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		c.checkLabelStrings(md, &cpath{key: "metadata", idx: -1})
	}
	spec, _ := m["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	if md, ok := tmpl["metadata"].(map[string]any); ok {
		path := &cpath{parent: &cpath{parent: &cpath{key: "spec", idx: -1}, key: "template", idx: -1}, key: "metadata", idx: -1}
		c.checkLabelStrings(md, path)
	}
}

func (c *compiler) checkLabelStrings(md map[string]any, path *cpath) {
	for _, tag := range []string{"annotations", "labels"} {
		vals, ok := md[tag].(map[string]any)
		if !ok {
			continue
		}
		tpath := &cpath{parent: path, key: tag, idx: -1}
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			if _, ok := vals[k].(string); !ok {
				c.fail(&cpath{parent: tpath, key: k, idx: -1}, labelsMsg)
			}
		}
	}
}

// Check reports what Kyverno's policy validation rejects in a pattern, with
// the same errors as Compile, without compiling it.
func Check(p any) error {
	_, err := Compile(p)
	return err
}
