// Package wildcard is Kyverno's wildcard matching: '*' matches any run of
// characters (also none), '?' exactly one character, everything else
// itself, case sensitive. An empty pattern matches only the empty string.
// Characters are compared as runes, each invalid UTF-8 byte reading as
// U+FFFD, which gives the results of github.com/IGLOU-EU/go-wildcard Match,
// the matcher Kyverno uses for kinds, names, namespaces, annotations,
// labels, subjects, pattern values, condition values and JMESPath's
// wildcard function.
//
// Unlike that recursive matcher, Match only ever backtracks to the last '*',
// so it runs in O(len(pattern)*len(name)) time and does not allocate.
//
// This package is internal to the engine and imports only the standard
// library.
package wildcard

import (
	"strings"
	"unicode/utf8"
)

// Has reports whether s holds a wildcard character.
func Has(s string) bool { return strings.ContainsAny(s, "*?") }

// Match reports whether name matches pattern.
func Match(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0 // index in pattern after the last '*', and the index in name it resumes from
	for n < len(name) {
		if p < len(pattern) {
			pr, pw := utf8.DecodeRuneInString(pattern[p:])
			switch pr {
			case '*':
				p += pw
				star, mark = p, n
				continue
			case '?':
				_, nw := utf8.DecodeRuneInString(name[n:])
				p, n = p+pw, n+nw
				continue
			default:
				nr, nw := utf8.DecodeRuneInString(name[n:])
				if pr == nr {
					p, n = p+pw, n+nw
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the last '*' swallow one more character and retry.
		_, nw := utf8.DecodeRuneInString(name[mark:])
		mark += nw
		p, n = star, mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
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
	clean := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, utf8.RuneError) }
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
