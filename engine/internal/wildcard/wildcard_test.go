package wildcard

import (
	"testing"
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
