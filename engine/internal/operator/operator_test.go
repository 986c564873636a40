package operator

import (
	"regexp"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		give string
		want Op
	}{
		{"", Equal},
		{">", Equal},
		{"a", Equal},
		{">=1", MoreEqual},
		{"<=1", LessEqual},
		{">1", More},
		{"<1", Less},
		{"!a", NotEqual},
		{"!1-5", NotEqual},
		{"1-5", InRange},
		{"-5--1", InRange},
		{"1Gi-2Gi", InRange},
		{"1.5-2.5", InRange},
		{"1!-5", NotInRange},
		{"1.-5", Equal},
		{"1-", Equal},
		{"a-b", Equal},
		{"1-5x6", Equal},
		{"=5", Equal},
	}
	for _, tt := range tests {
		if got := Of(tt.give); got != tt.want {
			t.Errorf("Of(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// Kyverno's range expressions (pkg/engine/operator), the oracle for
// SplitRange.
var (
	inRangeRE    = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
	notInRangeRE = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
)

// TestSplitRangeMatchesKyverno compares SplitRange with Kyverno's regular
// expressions on every string of up to five characters over an alphabet
// that covers the grammar.
func TestSplitRangeMatchesKyverno(t *testing.T) {
	alphabet := []string{"1", "2", "-", "!", ".", "+", "|", "G", "x"}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		for _, tc := range []struct {
			sep string
			re  *regexp.Regexp
		}{{"-", inRangeRE}, {"!-", notInRangeRE}} {
			l, r, ok := SplitRange(s, tc.sep)
			m := tc.re.FindStringSubmatch(s)
			if ok != (m != nil) || ok && (l != m[1] || r != m[2]) {
				t.Errorf("SplitRange(%q, %q) = %q, %q, %v; Kyverno's expression gives %q", s, tc.sep, l, r, ok, m)
			}
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(s+c, depth-1)
		}
	}
	walk("", 5)
}
