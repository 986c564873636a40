package condition

import "unicode/utf8"

// wildcardMatch reports whether name matches pattern, where '*' matches any
// run of characters (including none) and '?' exactly one character. It has
// the results of github.com/IGLOU-EU/go-wildcard v1.0.3 Match, which Kyverno
// uses: an empty pattern matches only the empty name, characters are
// compared as runes (each invalid UTF-8 byte reads as U+FFFD), and nothing
// else is special. Unlike that library it only ever backtracks to the last
// '*', so "*a*a*a*b" against a long name costs at most
// len(pattern)*len(name) steps instead of exponentially many.
func wildcardMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	if pattern == "*" {
		return true
	}
	p, n := 0, 0
	starP, starN := -1, -1
	for n < len(name) {
		if p < len(pattern) {
			pr, pw := utf8.DecodeRuneInString(pattern[p:])
			switch pr {
			case '*':
				starP, starN = p+pw, n
				p += pw
				continue
			case '?':
				_, nw := utf8.DecodeRuneInString(name[n:])
				p += pw
				n += nw
				continue
			default:
				nr, nw := utf8.DecodeRuneInString(name[n:])
				if nr == pr {
					p += pw
					n += nw
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' swallow one more character and retry.
		_, nw := utf8.DecodeRuneInString(name[starN:])
		starN += nw
		p, n = starP, starN
	}
	for ; p < len(pattern); p++ {
		if pattern[p] != '*' {
			return false
		}
	}
	return true
}
