package match

import (
	"strings"
	"unicode/utf8"
)

// pattern is a compiled Kyverno wildcard: '*' matches any run of characters
// (also none), '?' exactly one character, everything else itself, case
// sensitive. An empty pattern matches only the empty string. This is the
// matcher Kyverno uses for kinds, names, namespaces, annotations, wildcard
// label selectors and subjects (github.com/IGLOU-EU/go-wildcard Match).
type pattern struct {
	op  patternOp
	lit string // the literal (exact), the part between the stars, or the whole pattern (general)
}

type patternOp uint8

const (
	patExact    patternOp = iota // no wildcard: equality
	patAny                       // only stars: matches everything
	patPrefix                    // "lit*"
	patSuffix                    // "*lit"
	patContains                  // "*lit*"
	patGeneral                   // anything else
)

func hasWildcard(s string) bool { return strings.ContainsAny(s, "*?") }

func compilePattern(p string) pattern {
	// Kyverno compares runes, and every invalid UTF-8 byte becomes U+FFFD,
	// so byte-wise fast paths are only exact for a clean literal.
	clean := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, utf8.RuneError) }
	if !hasWildcard(p) {
		if !clean(p) {
			return pattern{op: patGeneral, lit: p}
		}
		return pattern{op: patExact, lit: p}
	}
	core := strings.Trim(p, "*")
	if core == "" {
		return pattern{op: patAny}
	}
	if hasWildcard(core) || !clean(core) {
		return pattern{op: patGeneral, lit: p}
	}
	lead, trail := p[0] == '*', p[len(p)-1] == '*'
	switch {
	case lead && trail:
		return pattern{op: patContains, lit: core}
	case lead:
		return pattern{op: patSuffix, lit: core}
	default:
		return pattern{op: patPrefix, lit: core}
	}
}

func (p *pattern) match(s string) bool {
	switch p.op {
	case patExact:
		return s == p.lit
	case patAny:
		return true
	case patPrefix:
		return strings.HasPrefix(s, p.lit)
	case patSuffix:
		return strings.HasSuffix(s, p.lit)
	case patContains:
		return strings.Contains(s, p.lit)
	default:
		return wildcardMatch(p.lit, s)
	}
}

// wildcardMatch matches s against a pattern of '*' and '?', rune by rune,
// with the usual single back-tracking point: on a mismatch, the last '*'
// takes one more rune. It does not allocate.
func wildcardMatch(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0 // index in p after the last '*', and the index in s it resumes from
	for si < len(s) {
		if pi < len(p) {
			pr, pw := utf8.DecodeRuneInString(p[pi:])
			switch pr {
			case '*':
				pi += pw
				star, mark = pi, si
				continue
			case '?':
				_, sw := utf8.DecodeRuneInString(s[si:])
				pi, si = pi+pw, si+sw
				continue
			default:
				sr, sw := utf8.DecodeRuneInString(s[si:])
				if pr == sr {
					pi, si = pi+pw, si+sw
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		_, sw := utf8.DecodeRuneInString(s[mark:])
		mark += sw
		pi, si = star, mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchAny reports whether one of the patterns matches s.
func matchAny(ps []pattern, s string) bool {
	for i := range ps {
		if ps[i].match(s) {
			return true
		}
	}
	return false
}

func compilePatterns(ss []string) []pattern {
	if len(ss) == 0 {
		return nil
	}
	out := make([]pattern, len(ss))
	for i, s := range ss {
		out[i] = compilePattern(s)
	}
	return out
}

// pairPattern matches one key/value entry of a map (annotations, wildcard
// matchLabels): some entry must match both the key and the value pattern.
type pairPattern struct {
	key, value pattern
}

func (pp *pairPattern) matchIn(m map[string]string) bool {
	if pp.key.op == patExact {
		v, ok := m[pp.key.lit]
		return ok && pp.value.match(v)
	}
	for k, v := range m {
		if pp.key.match(k) && pp.value.match(v) {
			return true
		}
	}
	return false
}

// AnyWildcard reports whether s matches one of the wildcard patterns
// (`*` and `?`), as Kyverno matches namespaces of failure action overrides.
func AnyWildcard(patterns []string, s string) bool {
	for _, p := range patterns {
		if wildcardMatch(p, s) {
			return true
		}
	}
	return false
}
