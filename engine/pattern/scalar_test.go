package pattern

import (
	"regexp"
	"strings"
	"testing"
)

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

// kyvernoAnchorRE is Kyverno's anchor expression (pkg/engine/anchor).
var kyvernoAnchorRE = regexp.MustCompile(`^(?P<modifier>[+<=X^])?\((?P<key>.+)\)$`)
