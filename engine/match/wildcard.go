package match

import "github.com/verdict-policy/verdict/engine/internal/wildcard"

// pattern is a compiled Kyverno wildcard (see engine/internal/wildcard), the
// matcher Kyverno uses for kinds, names, namespaces, annotations, wildcard
// label selectors and subjects.
type pattern = wildcard.Pattern

func hasWildcard(s string) bool { return wildcard.Has(s) }

func compilePattern(p string) pattern { return wildcard.Compile(p) }

func wildcardMatch(p, s string) bool { return wildcard.Match(p, s) }

// matchAny reports whether one of the patterns matches s.
func matchAny(ps []pattern, s string) bool {
	for i := range ps {
		if ps[i].Match(s) {
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
	if k, ok := pp.key.Literal(); ok {
		v, ok := m[k]
		return ok && pp.value.Match(v)
	}
	for k, v := range m {
		if pp.key.Match(k) && pp.value.Match(v) {
			return true
		}
	}
	return false
}

// AnyWildcard reports whether s matches one of the wildcard patterns, as
// Kyverno matches namespaces of failure action overrides.
func AnyWildcard(patterns []string, s string) bool { return wildcard.MatchAny(patterns, s) }
