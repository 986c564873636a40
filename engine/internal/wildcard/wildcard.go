package wildcard

import (
	"strings"
	"unicode/utf8"
)

// Meter is told of the work of a match and can stop it.
type Meter interface {
	// Spend is told of n more steps (a step is one byte or rune of the
	// name compared against up to 64 runes of the pattern) and returns
	// false to stop the match.
	Spend(n int) bool
}

// meterEvery is how many steps of one scan pass between two calls of
// Meter.Spend.
const meterEvery = 1 << 12

// Has reports whether s holds a wildcard character.
func Has(s string) bool { return strings.ContainsAny(s, "*?") }

// Match reports whether name matches pattern.
func Match(pattern, name string) bool {
	m, _ := match(pattern, name, nil)
	return m
}

// MatchMeter is Match reporting its work to m (nil: no meter). ok is false
// when m stopped the match; matched is then false and means nothing.
func MatchMeter(pattern, name string, m Meter) (matched, ok bool) {
	return match(pattern, name, m)
}

// matcher is the state of one match: the meter and the steps not yet
// reported to it.
type matcher struct {
	m       Meter
	pending int
	stopped bool
}

// spend records n steps, reporting them to the meter once they add up to
// meterEvery. It returns false when the meter stopped the match.
func (mt *matcher) spend(n int) bool {
	if mt.m == nil {
		return true
	}
	mt.pending += n
	if mt.pending < meterEvery {
		return true
	}
	return mt.flush()
}

// flush reports the pending steps.
func (mt *matcher) flush() bool {
	if mt.m == nil || mt.stopped {
		return !mt.stopped
	}
	n := mt.pending
	mt.pending = 0
	if n > 0 && !mt.m.Spend(n) {
		mt.stopped = true
	}
	return !mt.stopped
}

func match(pattern, name string, m Meter) (bool, bool) {
	mt := matcher{m: m}
	ok := mt.run(pattern, name)
	if !mt.flush() {
		return false, false
	}
	return ok, true
}

// run matches name against pattern; the caller checks mt.stopped.
func (mt *matcher) run(pattern, name string) bool {
	first := strings.IndexByte(pattern, '*')
	if first < 0 {
		n, ok := mt.prefix(pattern, name)
		return ok && n == len(name)
	}
	last := strings.LastIndexByte(pattern, '*')
	head, tail := pattern[:first], pattern[last+1:]
	lo, ok := mt.prefix(head, name)
	if !ok {
		return false
	}
	hi, ok := mt.suffix(tail, name[lo:])
	if !ok {
		return false
	}
	region := name[lo : lo+hi]
	middle := ""
	if first < last {
		middle = pattern[first+1 : last]
	}
	for middle != "" {
		var seg string
		if i := strings.IndexByte(middle, '*'); i >= 0 {
			seg, middle = middle[:i], middle[i+1:]
		} else {
			seg, middle = middle, ""
		}
		if seg == "" {
			continue
		}
		end, ok := mt.find(seg, region)
		if !ok || mt.stopped {
			return false
		}
		region = region[end:]
	}
	return true
}

// prefix matches seg, which holds no '*', at the start of s and returns
// the number of bytes of s it took.
func (mt *matcher) prefix(seg, s string) (int, bool) {
	p, n := 0, 0
	for p < len(seg) {
		if n >= len(s) {
			return 0, false
		}
		if pc, nc := seg[p], s[n]; pc < utf8.RuneSelf && nc < utf8.RuneSelf {
			if pc != '?' && pc != nc {
				return 0, false
			}
			p, n = p+1, n+1
			continue
		}
		pr, pw := utf8.DecodeRuneInString(seg[p:])
		nr, nw := utf8.DecodeRuneInString(s[n:])
		if pr != '?' && pr != nr {
			return 0, false
		}
		p, n = p+pw, n+nw
	}
	mt.spend(n)
	return n, true
}

// suffix matches seg, which holds no '*', at the end of s and returns the
// index in s where it starts. Decoding backwards gives the runes decoding
// forwards gives, invalid bytes included: a rune boundary found from the
// end is one from the start.
func (mt *matcher) suffix(seg, s string) (int, bool) {
	p, n := len(seg), len(s)
	for p > 0 {
		if n <= 0 {
			return 0, false
		}
		pr, pw := utf8.DecodeLastRuneInString(seg[:p])
		nr, nw := utf8.DecodeLastRuneInString(s[:n])
		if pr != '?' && pr != nr {
			return 0, false
		}
		p, n = p-pw, n-nw
	}
	mt.spend(len(s) - n)
	return n, true
}

// clean reports whether s compares byte by byte as it compares rune by
// rune: valid UTF-8 without U+FFFD (which equals any invalid byte).
func clean(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, utf8.RuneError)
}

// find returns the end (in bytes) of the leftmost match of seg, a segment
// between two stars, in s.
func (mt *matcher) find(seg, s string) (int, bool) {
	if strings.IndexByte(seg, '?') < 0 && clean(seg) {
		// A clean literal starts with a rune's first byte and holds whole
		// runes, so a byte match is a rune match at a rune boundary.
		i := strings.Index(s, seg)
		if i < 0 {
			mt.spend(len(s))
			return 0, false
		}
		mt.spend(i + len(seg))
		return i + len(seg), true
	}
	k := utf8.RuneCountInString(seg)
	if k*len(s) <= naiveWork {
		return mt.naive(seg, s, k)
	}
	return mt.shiftAnd(seg, s, k)
}

// naiveWork is the most work (segment runes times name bytes) find does
// by trying each position in turn instead of setting up shiftAnd.
const naiveWork = 1 << 11

// naive finds the leftmost match of seg (k runes, which may hold '?') in s
// by trying each rune boundary of s: O(len(s)*k).
func (mt *matcher) naive(seg, s string, k int) (int, bool) {
	words := (k + 63) / 64 // steps per position tried, as shiftAnd counts
	for i := 0; i < len(s); {
		if n, ok := mt.prefix(seg, s[i:]); ok {
			mt.spend(i * words)
			return i + n, true
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
	}
	mt.spend(len(s) * words)
	return 0, false
}

// smallRunes is how many distinct non-ASCII runes a segment may hold
// before shiftAnd looks them up in a map instead of a list.
const smallRunes = 8

// shiftAnd finds the leftmost match of seg (which may hold '?') in s with
// the shift-and algorithm: bit i of the state is set when the first i+1
// runes of seg match the runes of s ending at the current one.
func (mt *matcher) shiftAnd(seg string, s string, k int) (int, bool) {
	words := (k + 63) / 64
	// masks[c*words : (c+1)*words] is the mask of ASCII rune c; other runes
	// are in others (or byRune); qmask has the bits of the '?'s, which
	// match any rune.
	var (
		smallMasks [128]uint64
		smallState [1]uint64
		masks      []uint64
		state      []uint64
		qmask      []uint64
		smallQ     [1]uint64
	)
	if words == 1 {
		masks, state, qmask = smallMasks[:], smallState[:], smallQ[:]
	} else {
		masks = make([]uint64, 128*words)
		state = make([]uint64, words)
		qmask = make([]uint64, words)
	}
	type runeMask struct {
		r    rune
		mask []uint64
	}
	var (
		others []runeMask
		byRune map[rune][]uint64
	)
	i := 0
	for _, r := range seg {
		w, bit := i/64, uint64(1)<<(i%64)
		switch {
		case r == '?':
			qmask[w] |= bit
		case r < utf8.RuneSelf:
			masks[int(r)*words+w] |= bit
		default:
			var mask []uint64
			if byRune != nil {
				mask = byRune[r]
			} else {
				for _, o := range others {
					if o.r == r {
						mask = o.mask
						break
					}
				}
			}
			if mask == nil {
				mask = make([]uint64, words)
				if byRune != nil {
					byRune[r] = mask
				} else if others = append(others, runeMask{r, mask}); len(others) > smallRunes {
					byRune = make(map[rune][]uint64, 2*len(others))
					for _, o := range others {
						byRune[o.r] = o.mask
					}
				}
			}
			mask[w] |= bit
		}
		i++
	}
	lookup := func(r rune) []uint64 {
		if byRune != nil {
			return byRune[r]
		}
		for _, o := range others {
			if o.r == r {
				return o.mask
			}
		}
		return nil
	}
	top, topBit := (k-1)/64, uint64(1)<<((k-1)%64)
	steps := 0
	for n := 0; n < len(s); {
		r, width := rune(s[n]), 1
		if r >= utf8.RuneSelf {
			r, width = utf8.DecodeRuneInString(s[n:])
		}
		n += width
		var mask []uint64
		if r < utf8.RuneSelf {
			mask = masks[int(r)*words : int(r+1)*words]
		} else {
			mask = lookup(r)
		}
		carry := uint64(1)
		for w := range words {
			next := state[w] >> 63
			m := qmask[w]
			if mask != nil {
				m = mask[w] | qmask[w]
			}
			state[w] = (state[w]<<1 | carry) & m
			carry = next
		}
		if steps += words; steps >= meterEvery {
			if !mt.spend(steps) {
				return 0, false
			}
			steps = 0
		}
		if state[top]&topBit != 0 {
			mt.spend(steps)
			return n, true
		}
	}
	mt.spend(steps)
	return 0, false
}

// Pattern is a compiled wildcard pattern: common shapes (a literal, a
// prefix, a suffix, a substring, stars only, "?*") match without the
// general algorithm. The zero Pattern matches only the empty string.
type Pattern struct {
	op  op
	lit string // the literal (exact), the part between the stars, or the whole pattern (general)
}

type op uint8

const (
	opExact    op = iota // no wildcard: equality
	opAny                // only stars: matches everything
	opNonEmpty           // "?*" or "*?": at least one character
	opPrefix             // "lit*"
	opSuffix             // "*lit"
	opContains           // "*lit*"
	opGeneral            // anything else
)

// Compile analyses p once for repeated matching.
func Compile(p string) Pattern {
	// Runes are compared with invalid bytes read as U+FFFD, so byte-wise
	// fast paths are only exact for a clean literal.
	if !Has(p) {
		if !clean(p) {
			return Pattern{op: opGeneral, lit: p}
		}
		return Pattern{op: opExact, lit: p}
	}
	if p == "?*" || p == "*?" {
		return Pattern{op: opNonEmpty}
	}
	core := strings.Trim(p, "*")
	if core == "" {
		return Pattern{op: opAny}
	}
	if Has(core) || !clean(core) {
		return Pattern{op: opGeneral, lit: p}
	}
	lead, trail := p[0] == '*', p[len(p)-1] == '*'
	switch {
	case lead && trail:
		return Pattern{op: opContains, lit: core}
	case lead:
		return Pattern{op: opSuffix, lit: core}
	default:
		return Pattern{op: opPrefix, lit: core}
	}
}

// Match reports whether s matches the pattern.
func (p *Pattern) Match(s string) bool {
	switch p.op {
	case opExact:
		return s == p.lit
	case opAny:
		return true
	case opNonEmpty:
		return s != ""
	case opPrefix:
		return strings.HasPrefix(s, p.lit)
	case opSuffix:
		return strings.HasSuffix(s, p.lit)
	case opContains:
		return strings.Contains(s, p.lit)
	default:
		return Match(p.lit, s)
	}
}

// MatchMeter is Match reporting its work to m (nil: no meter); see
// MatchMeter.
func (p *Pattern) MatchMeter(s string, m Meter) (matched, ok bool) {
	if m == nil {
		return p.Match(s), true
	}
	switch p.op {
	case opGeneral:
		return match(p.lit, s, m)
	case opContains:
		if !m.Spend(len(s)) {
			return false, false
		}
	case opExact, opPrefix, opSuffix:
		if !m.Spend(min(len(s), len(p.lit))) {
			return false, false
		}
	}
	return p.Match(s), true
}

// Linear reports whether the pattern matches by a single comparison or
// search (exact, prefix, suffix, substring, any), in O(len(s)) steps:
// callers can charge that up front and call Match.
func (p *Pattern) Linear() bool { return p.op != opGeneral }

// Len is the length of the pattern's text (of its literal part for the
// linear shapes).
func (p *Pattern) Len() int { return len(p.lit) }

// Literal returns the pattern's text and true when it has no wildcard (so
// callers can look it up in a map instead of scanning).
func (p *Pattern) Literal() (string, bool) {
	return p.lit, p.op == opExact
}

// MatchAny reports whether s matches one of the patterns.
func MatchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if Match(p, s) {
			return true
		}
	}
	return false
}
