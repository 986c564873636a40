package mutate

import (
	"testing"
)

// rebuiltAnchor is how Kyverno writes an anchor back: modifier, then the
// key in parentheses.
func rebuiltAnchor(a anchor) string {
	if a.typ == anchorCondition {
		return "(" + a.key + ")"
	}
	return string(a.typ) + "(" + a.key + ")"
}

func TestParseAnchor(t *testing.T) {
	tests := []struct {
		give       string
		wantOK     bool
		wantType   anchorType
		wantKey    string
		wantString string
	}{
		{"(name)", true, anchorCondition, "name", "(name)"},
		{"<(emptyDir)", true, anchorGlobal, "emptyDir", "<(emptyDir)"},
		{"+(cluster-autoscaler.kubernetes.io/safe-to-evict)", true, anchorAdd, "cluster-autoscaler.kubernetes.io/safe-to-evict", "+(cluster-autoscaler.kubernetes.io/safe-to-evict)"},
		{"  X(a) ", true, anchorNegation, "a", "X(a)"},
		{"=(a)", true, anchorEquality, "a", "=(a)"},
		{"^(a)", true, anchorExistence, "a", "^(a)"},
		{"((a))", true, anchorCondition, "(a)", "((a))"},
		{"+()", false, 0, "", ""},
		{"()", false, 0, "", ""},
		{"name", false, 0, "", ""},
		{"(a\nb)", false, 0, "", ""},
		{"Y(a)", false, 0, "", ""},
	}
	for _, tt := range tests {
		got, ok := parseAnchor(tt.give)
		if ok != tt.wantOK || ok && (got.typ != tt.wantType || got.key != tt.wantKey || got.String() != tt.wantString) {
			t.Errorf("parseAnchor(%q) = %q %q %q, %v, want %q %q %q, %v", tt.give, got.typ, got.key, got.String(), ok, tt.wantType, tt.wantKey, tt.wantString, tt.wantOK)
		}
	}
}

// FuzzParseAnchor checks that an anchor's String, the trimmed key it was
// parsed from, is the anchor as Kyverno rebuilds it.
func FuzzParseAnchor(f *testing.F) {
	for _, s := range []string{"(a)", " +(b) ", "<(c)", "X()", "((d)", "\t=(e)\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseAnchor(s)
		if ok && a.String() != rebuiltAnchor(a) {
			t.Fatalf("parseAnchor(%q).String() = %q, want %q", s, a.String(), rebuiltAnchor(a))
		}
	})
}
