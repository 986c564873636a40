package pattern

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/operator"
	"github.com/verdict-policy/verdict/engine/internal/quantity"
	"github.com/verdict-policy/verdict/engine/internal/wildcard"
	"k8s.io/apimachinery/pkg/api/resource"
)

// cond is one comparison such as ">=1Gi", with its operand pre-parsed as a
// duration and as a quantity, the way Kyverno tries them in turn.
type cond struct {
	op      operator.Op // never InRange or NotInRange
	operand string
	wild    bool             // operand holds '*' or '?'
	glob    wildcard.Pattern // operand as a wildcard pattern, when wild
	durOK   bool
	dur     time.Duration
	qtyOK   bool
	qty     resource.Quantity
}

func newCond(op operator.Op, operand string) cond {
	c := cond{op: op, operand: operand, wild: wildcard.Has(operand)}
	if c.wild {
		c.glob = wildcard.Compile(operand)
	}
	if d, err := time.ParseDuration(operand); err == nil {
		c.durOK, c.dur = true, d
	}
	if q, err := quantity.Parse(operand); err == nil {
		c.qtyOK, c.qty = true, q
	}
	return c
}

// termKind tells how a term combines its conditions.
type termKind uint8

const (
	termSingle     termKind = iota // a
	termInRange                    // a && b
	termNotInRange                 // a || b
)

// term is one "&"-separated part of a string pattern.
type term struct {
	kind termKind
	a, b cond
}

// newTerm parses one condition as validateStringPattern does.
func newTerm(s string) term {
	switch op := operator.Of(s); op {
	case operator.InRange:
		left, right, _ := operator.SplitRange(s, "-")
		// Kyverno re-parses ">= left" and "<= right".
		return term{kind: termInRange, a: newCond(operator.MoreEqual, left), b: newCond(operator.LessEqual, right)}
	case operator.NotInRange:
		left, right, _ := operator.SplitRange(s, "!-")
		return term{kind: termNotInRange, a: newCond(operator.Less, left), b: newCond(operator.More, right)}
	default:
		return term{a: newCond(op, strings.TrimSpace(s[len(op.String()):]))}
	}
}

// pkind is the type of a scalar pattern.
type pkind uint8

const (
	pNil pkind = iota
	pBool
	pInt
	pFloat
	pString
)

// scalar is a compiled scalar pattern: null, a bool, a number, or a string
// with "|" alternatives of "&" terms.
type scalar struct {
	kind pkind
	b    bool
	i    int64
	f    float64
	s    string
	alts [][]term
}

func newStringScalar(s string) scalar {
	sc := scalar{kind: pString, s: s}
	parts := strings.Split(s, "|")
	sc.alts = make([][]term, len(parts))
	for i, part := range parts {
		ands := strings.Split(strings.Trim(part, " "), "&")
		terms := make([]term, len(ands))
		for j, a := range ands {
			terms[j] = newTerm(strings.Trim(a, " "))
		}
		sc.alts[i] = terms
	}
	return sc
}

// match reports whether a resource value satisfies the pattern
// (Kyverno's pattern.Validate), charging b (nil: no limit) with one step per
// alternative and with the wildcard work. Once b is spent the result means
// nothing: the caller reads b.Err().
func (sc *scalar) match(raw any, b *engine.Budget) bool {
	v := classify(raw)
	switch sc.kind {
	case pBool:
		return v.kind == vBool && v.b == sc.b
	case pInt:
		switch v.kind {
		case vInt:
			return v.i == sc.i
		case vFloat:
			return v.f == math.Trunc(v.f) && int64(v.f) == sc.i
		case vString:
			i, err := strconv.ParseInt(v.s, 10, 64)
			return err == nil && i == sc.i
		}
		return false
	case pFloat:
		switch v.kind {
		case vInt:
			return sc.f == math.Trunc(sc.f) && int64(sc.f) == v.i
		case vFloat:
			return v.f == sc.f
		case vString:
			f, err := strconv.ParseFloat(v.s, 64)
			return err == nil && f == sc.f
		}
		return false
	case pNil:
		switch v.kind {
		case vNil:
			return true
		case vFloat:
			return v.f == 0
		case vInt:
			return v.i == 0
		case vString:
			return v.s == ""
		case vBool:
			return !v.b
		}
		return false
	}
	if v.kind == vString && v.s == sc.s {
		return true
	}
	vc := valueCache{v: v, b: b}
	for _, terms := range sc.alts {
		if b.Step(1) != nil {
			return false
		}
		ok := true
		for i := range terms {
			if !terms[i].match(&vc) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (t *term) match(vc *valueCache) bool {
	switch t.kind {
	case termInRange:
		return t.a.match(vc) && t.b.match(vc)
	case termNotInRange:
		return t.a.match(vc) || t.b.match(vc)
	}
	return t.a.match(vc)
}

// valueCache holds what the conditions of one pattern derive from the value,
// so that each is computed at most once.
type valueCache struct {
	v value
	b *engine.Budget // charged with wildcard matches (nil: no limit)

	numDone bool
	numOK   bool
	num     string

	durDone bool
	durOK   bool
	dur     time.Duration

	qtyDone bool
	qtyOK   bool
	qty     resource.Quantity
}

// numString is Kyverno's convertNumberToString.
func (vc *valueCache) numString() (string, bool) {
	if !vc.numDone {
		vc.numDone = true
		switch vc.v.kind {
		case vNil:
			vc.num, vc.numOK = "0", true
		case vString:
			vc.num, vc.numOK = vc.v.s, true
		case vFloat:
			vc.num, vc.numOK = strconv.FormatFloat(vc.v.f, 'f', 6, 64), true
		case vInt:
			vc.num, vc.numOK = strconv.FormatInt(vc.v.i, 10), true
		}
	}
	return vc.num, vc.numOK
}

func (vc *valueCache) duration() (time.Duration, bool) {
	if !vc.durDone {
		vc.durDone = true
		if s, ok := vc.numString(); ok {
			d, err := time.ParseDuration(s)
			vc.dur, vc.durOK = d, err == nil
		}
	}
	return vc.dur, vc.durOK
}

func (vc *valueCache) quantity() (*resource.Quantity, bool) {
	if !vc.qtyDone {
		vc.qtyDone = true
		if s, ok := vc.numString(); ok {
			q, err := quantity.Parse(s)
			vc.qty, vc.qtyOK = q, err == nil
		}
	}
	return &vc.qty, vc.qtyOK
}

// match compares as Kyverno's validateString: as durations if both sides
// parse as durations, else as quantities if both parse as quantities, else as
// strings with wildcards (for "" and "!" only).
func (c *cond) match(vc *valueCache) bool {
	if c.durOK {
		if d, ok := vc.duration(); ok {
			return operator.CompareDurations(c.op, d, c.dur)
		}
	}
	if c.qtyOK {
		if q, ok := vc.quantity(); ok {
			return operator.Compare(c.op, quantity.Cmp(*q, c.qty))
		}
	}
	if c.op != operator.Equal && c.op != operator.NotEqual {
		return false
	}
	var s string
	switch v := &vc.v; v.kind {
	case vString:
		s = v.s
	case vInt:
		s = strconv.FormatInt(v.i, 10)
	case vFloat:
		s = strconv.FormatFloat(v.f, 'E', -1, 64)
	case vBool:
		s = strconv.FormatBool(v.b)
	default:
		return false
	}
	var m bool
	if c.wild {
		m, _ = vc.b.MatchPattern(&c.glob, s) // a spent budget is read by Validate
	} else {
		m = c.operand == s
	}
	if c.op == operator.NotEqual {
		return !m
	}
	return m
}
