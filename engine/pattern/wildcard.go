package pattern

import (
	"strings"
	"unicode/utf8"
)

// containsWildcard reports whether s holds '*' or '?'.
func containsWildcard(s string) bool {
	return strings.ContainsAny(s, "*?")
}

// globMatch reports whether name matches pattern, where '*' matches any run
// of characters (also none) and '?' exactly one character. It compares runes,
// with each invalid UTF-8 byte read as U+FFFD, like Kyverno's wildcard.Match
// (github.com/IGLOU-EU/go-wildcard), but in linear space and without the
// exponential backtracking of the recursive original.
func globMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	if pattern == "*" {
		return true
	}
	p, n := 0, 0
	starP, starN := -1, 0
	for n < len(name) {
		if p < len(pattern) {
			pr, pw := utf8.DecodeRuneInString(pattern[p:])
			if pr == '*' {
				starP, starN = p+pw, n
				p += pw
				continue
			}
			nr, nw := utf8.DecodeRuneInString(name[n:])
			if pr == '?' || pr == nr {
				p += pw
				n += nw
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star swallow one more character and retry.
		_, w := utf8.DecodeRuneInString(name[starN:])
		starN += w
		p, n = starP, starN
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// globKind is the shape of a wildcard pattern, for the common shapes that
// need no backtracking.
type globKind uint8

const (
	globGeneral  globKind = iota
	globAny               // "*"
	globNonEmpty          // "?*" or "*?"
	globAffixes           // ASCII "prefix*suffix"
)

// glob is a pre-analysed wildcard pattern.
type glob struct {
	kind           globKind
	pattern        string
	prefix, suffix string
}

func newGlob(p string) glob {
	g := glob{pattern: p}
	switch {
	case p == "*":
		g.kind = globAny
	case p == "?*" || p == "*?":
		g.kind = globNonEmpty
	case isASCII(p) && strings.Count(p, "*") == 1 && !strings.Contains(p, "?"):
		// ASCII bytes are whole runes in any string, valid UTF-8 or not, so
		// byte-wise affixes are rune-wise affixes.
		i := strings.IndexByte(p, '*')
		g.kind, g.prefix, g.suffix = globAffixes, p[:i], p[i+1:]
	}
	return g
}

func (g *glob) match(s string) bool {
	switch g.kind {
	case globAny:
		return true
	case globNonEmpty:
		return s != ""
	case globAffixes:
		return len(s) >= len(g.prefix)+len(g.suffix) && strings.HasPrefix(s, g.prefix) && strings.HasSuffix(s, g.suffix)
	}
	return globMatch(g.pattern, s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
