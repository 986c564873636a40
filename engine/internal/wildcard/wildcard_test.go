package wildcard

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		name        string
		givePattern string
		giveString  string
		want        bool
	}{
		{name: "exact", givePattern: "nginx", giveString: "nginx", want: true},
		{name: "exact is case sensitive", givePattern: "Pod", giveString: "pod", want: false},
		{name: "exact needs the whole string", givePattern: "nginx", giveString: "nginx-1", want: false},
		{name: "empty pattern matches empty", givePattern: "", giveString: "", want: true},
		{name: "empty pattern matches nothing else", givePattern: "", giveString: "a", want: false},
		{name: "star matches empty", givePattern: "*", giveString: "", want: true},
		{name: "star matches anything", givePattern: "*", giveString: "kube-system", want: true},
		{name: "stars only", givePattern: "***", giveString: "x", want: true},
		{name: "prefix", givePattern: "prod-*", giveString: "prod-db", want: true},
		{name: "prefix matches the bare prefix", givePattern: "prod-*", giveString: "prod-", want: true},
		{name: "prefix mismatch", givePattern: "prod-*", giveString: "dev-db", want: false},
		{name: "suffix", givePattern: "*-system", giveString: "kube-system", want: true},
		{name: "suffix mismatch", givePattern: "*-system", giveString: "kube-systems", want: false},
		{name: "contains", givePattern: "*mongo*", giveString: "my-mongo-0", want: true},
		{name: "contains mismatch", givePattern: "*mongo*", giveString: "postgres", want: false},
		{name: "question mark is one character", givePattern: "app?", giveString: "app1", want: true},
		{name: "question mark needs a character", givePattern: "app?", giveString: "app", want: false},
		{name: "question mark is only one character", givePattern: "app?", giveString: "app12", want: false},
		{name: "question star is at least one", givePattern: "?*", giveString: "", want: false},
		{name: "question star matches one", givePattern: "?*", giveString: "a", want: true},
		{name: "inner star", givePattern: "a*c", giveString: "abbbc", want: true},
		{name: "inner star mismatch", givePattern: "a*c", giveString: "abbbd", want: false},
		{name: "star needs backtracking", givePattern: "*ab*abc", giveString: "xabyabababc", want: true},
		{name: "two stars with literal", givePattern: "*a*b", giveString: "bab", want: true},
		{name: "two stars with literal mismatch", givePattern: "*a*b", giveString: "bba", want: false},
		{name: "question mark is one rune", givePattern: "caf?", giveString: "café", want: true},
		{name: "unicode prefix", givePattern: "é*", giveString: "été", want: true},
		{name: "slash is ordinary", givePattern: "system:serviceaccount:*:default", giveString: "system:serviceaccount:ns/x:default", want: true},
		{name: "invalid UTF-8 bytes compare as U+FFFD", givePattern: "a\xffb*", giveString: "a\xfeb", want: true},
		{name: "U+FFFD matches an invalid byte", givePattern: "\uFFFD*", giveString: "\xff", want: true},
		{name: "middle segment leftmost", givePattern: "*ab*ab", giveString: "abab", want: true},
		{name: "middle segment may not overlap the suffix", givePattern: "*aba*aba", giveString: "ababa", want: false},
		{name: "head and tail may not overlap", givePattern: "ab*ba", giveString: "aba", want: false},
		{name: "question mark in a middle segment", givePattern: "*a?c*", giveString: "xxabcxx", want: true},
		{name: "question mark in a middle segment mismatch", givePattern: "*a?c*", giveString: "xxabbcxx", want: false},
		{name: "question mark middle segment is one rune", givePattern: "*x?y*", giveString: "-xéy-", want: true},
		{name: "question mark middle segment over an invalid byte", givePattern: "*x?y*", giveString: "-x\xffy-", want: true},
		{name: "U+FFFD in a middle segment matches an invalid byte", givePattern: "*x\uFFFDy*", giveString: "-x\xfey-", want: true},
		{name: "invalid byte in a middle segment matches U+FFFD", givePattern: "*x\xfey*", giveString: "-x\uFFFDy-", want: true},
		{name: "suffix decodes backwards over multibyte runes", givePattern: "*?é", giveString: "aéé", want: true},
		{name: "suffix over a truncated rune", givePattern: "*??", giveString: "a\xe2\x82", want: true},
		{name: "suffix over a truncated rune counts bytes", givePattern: "*???", giveString: "\xe2\x82", want: false},
		{name: "question marks only", givePattern: "*???*", giveString: "ab", want: false},
		{name: "long segment with question mark", givePattern: "*" + strings.Repeat("a?", 100) + "b*", giveString: strings.Repeat("ax", 150) + "b", want: true},
		{name: "long segment with question mark mismatch", givePattern: "*" + strings.Repeat("a?", 100) + "b*", giveString: strings.Repeat("ax", 150) + "c", want: false},
		{name: "many distinct non-ASCII runes", givePattern: "*?αβγδεζηθικλμ*", giveString: "xxαβγδεζηθικλμ", want: true},
		{name: "many distinct non-ASCII runes mismatch", givePattern: "*?αβγδεζηθικλμ*", giveString: "xαβγδεζηθικλν", want: false},
		{name: "hostile literal segment", givePattern: "*" + strings.Repeat("a", 1000) + "b*c", giveString: strings.Repeat("a", 5000) + "c", want: false},
		{name: "hostile literal segment matches", givePattern: "*" + strings.Repeat("a", 1000) + "b*c", giveString: strings.Repeat("a", 5000) + "bc", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compile(tt.givePattern)
			if got := p.Match(tt.giveString); got != tt.want {
				t.Errorf("Compile(%q).Match(%q) = %v, want %v", tt.givePattern, tt.giveString, got, tt.want)
			}
		})
	}
}

// referenceMatch is go-wildcard's recursive Match, which Kyverno uses.
func referenceMatch(pattern, name string) bool {
	if pattern == "" {
		return name == pattern
	}
	if pattern == "*" {
		return true
	}
	var deep func(str, pat []rune) bool
	deep = func(str, pat []rune) bool {
		for len(pat) > 0 {
			switch pat[0] {
			default:
				if len(str) == 0 || str[0] != pat[0] {
					return false
				}
			case '?':
				if len(str) == 0 {
					return false
				}
			case '*':
				return deep(str, pat[1:]) || (len(str) > 0 && deep(str[1:], pat))
			}
			str = str[1:]
			pat = pat[1:]
		}
		return len(str) == 0 && len(pat) == 0
	}
	return deep([]rune(name), []rune(pattern))
}

// TestPatternMatchAgreesWithReference compares every pattern and string of
// up to four symbols over a small alphabet with Kyverno's matcher.
func TestPatternMatchAgreesWithReference(t *testing.T) {
	patternAlphabet := []string{"a", "b", "*", "?", "é", "\xff"}
	stringAlphabet := []string{"a", "b", "é", "\xfe"}
	words := func(alphabet []string, max int) []string {
		out := []string{""}
		level := []string{""}
		for range max {
			var next []string
			for _, w := range level {
				for _, c := range alphabet {
					next = append(next, w+c)
				}
			}
			out = append(out, next...)
			level = next
		}
		return out
	}
	strs := words(stringAlphabet, 4)
	for _, p := range words(patternAlphabet, 4) {
		cp := Compile(p)
		for _, s := range strs {
			want := referenceMatch(p, s)
			if got := cp.Match(s); got != want {
				t.Errorf("Compile(%q).Match(%q) = %v, want %v", p, s, got, want)
			}
			if got := Match(p, s); got != want {
				t.Errorf("Match(%q, %q) = %v, want %v", p, s, got, want)
			}
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("a*b?c", "axxbyc")
	f.Add("*", "")
	f.Add("?*", "é")
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 12 || len(s) > 24 { // keep the reference's recursion small
			return
		}
		cp := Compile(p)
		want := referenceMatch(p, s)
		if got := cp.Match(s); got != want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", p, s, got, want)
		}
		if got := Match(p, s); got != want {
			t.Errorf("Match(%q, %q) = %v, want %v", p, s, got, want)
		}
	})
}

// regexpMatch is the reference of the fuzz target: the pattern as a
// regular expression, '*' as (?s:.*) and '?' as (?s:.), every other rune
// quoted. Go's regexp reads each invalid UTF-8 byte of the input as U+FFFD,
// as the matcher does; the pattern's runes are decoded the same way.
func regexpMatch(t *testing.T, pattern, name string) bool {
	t.Helper()
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		t.Fatalf("regexp.Compile(%q) = %v", b.String(), err)
	}
	return re.MatchString(name)
}

// countingMeter counts the steps a match reports and stops it after limit
// steps (limit < 0: never).
type countingMeter struct {
	steps, limit int
}

func (m *countingMeter) Spend(n int) bool {
	m.steps += n
	return m.limit < 0 || m.steps <= m.limit
}

// TestMatchStepsAreBounded matches hostile patterns against a 64 KiB name
// and checks the work the matcher reports: linear in the name for literal
// segments, at most one step per rune and 64 pattern runes for a segment
// with '?'. The backtracking matcher took about len(name)*len(segment)
// steps (65M for the first row).
func TestMatchStepsAreBounded(t *testing.T) {
	const n = 64 << 10
	tests := []struct {
		name        string
		givePattern string
		giveString  string
		want        bool
		wantMax     int
	}{
		{
			name:        "literal segment, name ends with the suffix",
			givePattern: "*" + strings.Repeat("a", 1000) + "b*c",
			giveString:  strings.Repeat("a", n) + "c",
			wantMax:     2 * (n + 1000),
		},
		{
			name:        "literal segment, name without the suffix",
			givePattern: "*" + strings.Repeat("a", 1000) + "b*c",
			giveString:  strings.Repeat("a", n),
			wantMax:     2 * (n + 1000),
		},
		{
			name:        "many stars",
			givePattern: strings.Repeat("*a", 1000) + "*b",
			giveString:  strings.Repeat("a", n),
			wantMax:     2 * (n + 2000),
		},
		{
			name:        "segment with question marks",
			givePattern: "*" + strings.Repeat("a?", 500) + "b*c",
			giveString:  strings.Repeat("a", n) + "c",
			wantMax:     (n + 1) * (1000/64 + 1),
		},
		{
			name:        "short segment with question marks",
			givePattern: "*a?a?b*c",
			giveString:  strings.Repeat("a", n) + "c",
			wantMax:     n + 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &countingMeter{limit: -1}
			got, ok := MatchMeter(tt.givePattern, tt.giveString, m)
			if !ok || got != tt.want {
				t.Errorf("MatchMeter(%.20q..., %.20q...) = %v, %v, want %v, true", tt.givePattern, tt.giveString, got, ok, tt.want)
			}
			if m.steps > tt.wantMax {
				t.Errorf("MatchMeter(%.20q..., %.20q...) took %d steps, want at most %d", tt.givePattern, tt.giveString, m.steps, tt.wantMax)
			}
		})
	}
}

// TestMatchMeterStops checks that a meter that says stop ends the match
// early, and that the match says it did not finish.
func TestMatchMeterStops(t *testing.T) {
	const n = 1 << 20
	tests := []struct {
		name        string
		givePattern string
		giveString  string
	}{
		{name: "segment with question marks", givePattern: "*" + strings.Repeat("a?", 500) + "b*c", giveString: strings.Repeat("a", n) + "c"},
		{name: "long literal search", givePattern: "*b*c", giveString: strings.Repeat("a", n) + "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const limit = 10000
			m := &countingMeter{limit: limit}
			got, ok := MatchMeter(tt.givePattern, tt.giveString, m)
			if ok || got {
				t.Errorf("MatchMeter(%.20q..., %.20q...) with a stopping meter = %v, %v, want false, false", tt.givePattern, tt.giveString, got, ok)
			}
			// The matcher reports work every meterEvery steps, and a
			// literal search at once.
			if max := limit + meterEvery + 2*n; m.steps > max {
				t.Errorf("MatchMeter(%.20q..., %.20q...) went on for %d steps after the meter said stop at %d", tt.givePattern, tt.giveString, m.steps, limit)
			}
		})
	}
}

// TestPatternMatchMeter checks that the compiled fast paths report their
// work and give Match's result.
func TestPatternMatchMeter(t *testing.T) {
	tests := []struct {
		givePattern string
		giveString  string
		want        bool
	}{
		{givePattern: "nginx", giveString: "nginx", want: true},
		{givePattern: "prod-*", giveString: "prod-db", want: true},
		{givePattern: "*-system", giveString: "kube-system", want: true},
		{givePattern: "*mongo*", giveString: "postgres", want: false},
		{givePattern: "*", giveString: "x", want: true},
		{givePattern: "?*", giveString: "", want: false},
		{givePattern: "a?c*d", giveString: "abcxd", want: true},
	}
	for _, tt := range tests {
		p := Compile(tt.givePattern)
		m := &countingMeter{limit: -1}
		got, ok := p.MatchMeter(tt.giveString, m)
		if !ok || got != tt.want {
			t.Errorf("Compile(%q).MatchMeter(%q) = %v, %v, want %v, true", tt.givePattern, tt.giveString, got, ok, tt.want)
		}
		stopped := &countingMeter{limit: 0}
		if len(tt.giveString) > 0 && p.op != opAny && p.op != opNonEmpty {
			if _, ok := p.MatchMeter(tt.giveString, stopped); ok {
				t.Errorf("Compile(%q).MatchMeter(%q) with a meter that stops = _, true, want false", tt.givePattern, tt.giveString)
			}
		}
	}
}

// FuzzMatchRegexp compares Match with a regular expression built from the
// pattern, on inputs of any size.
func FuzzMatchRegexp(f *testing.F) {
	f.Add("a*b?c", "axxbyc")
	f.Add("*", "")
	f.Add("?*", "é")
	f.Add("*a?c*", "xxabcxx")
	f.Add("*x\xfey*", "-x\uFFFDy-")
	f.Add("*"+strings.Repeat("a?", 40)+"b*c", strings.Repeat("ax", 60)+"bc")
	f.Add("*?αβγδεζηθικλμ*", "xxαβγδεζηθικλμ")
	f.Add("ab*ba", "aba")
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 512 || len(s) > 8192 { // keep the regexp reference fast
			return
		}
		want := regexpMatch(t, p, s)
		if got := Match(p, s); got != want {
			t.Errorf("Match(%q, %q) = %v, want %v", p, s, got, want)
		}
		cp := Compile(p)
		if got := cp.Match(s); got != want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", p, s, got, want)
		}
		m := &countingMeter{limit: -1}
		if got, ok := MatchMeter(p, s, m); !ok || got != want {
			t.Errorf("MatchMeter(%q, %q) = %v, %v, want %v, true", p, s, got, ok, want)
		}
		// The work is bounded by the name times the words of the longest
		// segment, plus the pattern.
		words := utf8.RuneCountInString(p)/64 + 1
		if max := (len(s)+1)*words + len(p) + len(s); m.steps > max {
			t.Errorf("MatchMeter(%q, %q) took %d steps, want at most %d", p, s, m.steps, max)
		}
	})
}
