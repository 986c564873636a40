package pattern

import (
	"regexp"
	"strings"
	"testing"
)

func TestOperatorOf(t *testing.T) {
	tests := []struct {
		give string
		want operator
	}{
		{"", opEqual},
		{">", opEqual},
		{"a", opEqual},
		{">=1", opMoreEqual},
		{"<=1", opLessEqual},
		{">1", opMore},
		{"<1", opLess},
		{"!a", opNotEqual},
		{"!1-5", opNotEqual},
		{"1-5", opInRange},
		{"-5--1", opInRange},
		{"1Gi-2Gi", opInRange},
		{"1.5-2.5", opInRange},
		{"1!-5", opNotInRange},
		{"1.-5", opEqual},
		{"1-", opEqual},
		{"a-b", opEqual},
		{"1-5x6", opEqual},
		{"=5", opEqual},
	}
	for _, tt := range tests {
		if got := operatorOf(tt.give); got != tt.want {
			t.Errorf("operatorOf(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// Kyverno's range expressions (pkg/engine/operator), the oracle for
// splitRange.
var (
	inRangeRE    = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
	notInRangeRE = regexp.MustCompile(`^([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|\+]?\d+(?:\.\d+)?[A-Za-z]*)$`)
)

// TestSplitRangeMatchesKyverno compares splitRange with Kyverno's regular
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
			l, r, ok := splitRange(s, tc.sep)
			m := tc.re.FindStringSubmatch(s)
			if ok != (m != nil) || ok && (l != m[1] || r != m[2]) {
				t.Errorf("splitRange(%q, %q) = %q, %q, %v; Kyverno's expression gives %q", s, tc.sep, l, r, ok, m)
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

// kyvernoAnchorRE is Kyverno's anchor expression (pkg/engine/anchor).
var kyvernoAnchorRE = regexp.MustCompile(`^(?P<modifier>[+<=X^])?\((?P<key>.+)\)$`)

func TestParseAnchor(t *testing.T) {
	tests := []struct {
		give     string
		wantKind anchorKind
		wantKey  string
	}{
		{"(a)", anchorCondition, "a"},
		{"<(a)", anchorGlobal, "a"},
		{"X(a)", anchorNegation, "a"},
		{"+(a)", anchorAdd, "a"},
		{"=(a)", anchorEquality, "a"},
		{"^(a)", anchorExistence, "a"},
		{" (a) ", anchorCondition, "a"},
		{"((a))", anchorCondition, "(a)"},
		{"(a)(b)", anchorCondition, "a)(b"},
		{"()", anchorNone, ""},
		{"x(a)", anchorNone, ""},
		{"(a", anchorNone, ""},
		{"a", anchorNone, ""},
		{"(a\nb)", anchorNone, ""},
		{"=a)", anchorNone, ""},
	}
	for _, tt := range tests {
		kind, key := parseAnchor(tt.give)
		if kind != tt.wantKind || key != tt.wantKey {
			t.Errorf("parseAnchor(%q) = %v, %q, want %v, %q", tt.give, kind, key, tt.wantKind, tt.wantKey)
		}
	}
}

func TestParseAnchorMatchesKyverno(t *testing.T) {
	alphabet := []string{"(", ")", "X", "+", "^", "=", "<", "a", " ", "\n"}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		kind, key := parseAnchor(s)
		m := kyvernoAnchorRE.FindStringSubmatch(strings.TrimSpace(s))
		if (kind != anchorNone) != (m != nil) || m != nil && (key != m[2] || kind.modifier() != m[1]) {
			t.Errorf("parseAnchor(%q) = %v, %q; Kyverno's expression gives %q", s, kind, key, m)
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
