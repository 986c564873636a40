package reportwriter

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestInterner(t *testing.T) {
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	long := strings.Repeat("x", maxInternedLen)
	tests := []struct {
		name  string
		s     string
		share bool
	}{
		{"short", "validation rule 'check' passed.", true},
		{"at the max length", long, true},
		{"over the max length", long + "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tab interner
			first := tab.of(strings.Clone(tt.s))
			if got := tab.of(strings.Clone(tt.s)); same(got, first) != tt.share {
				t.Errorf("interner.of(%d bytes) shared = %v, want %v", len(tt.s), same(got, first), tt.share)
			}
		})
	}
}

// TestInternerFull: the table holds at most maxInterned strings, then
// starts over.
func TestInternerFull(t *testing.T) {
	var tab interner
	key := func(i int) string { return "s" + strconv.Itoa(i) }
	for i := range maxInterned {
		tab.of(key(i))
	}
	if got := len(tab.m); got != maxInterned {
		t.Fatalf("strings held at the limit = %d, want %d", got, maxInterned)
	}
	first := tab.of(key(0))
	if got := tab.of(strings.Clone(key(0))); unsafe.StringData(got) != unsafe.StringData(first) {
		t.Errorf("interner.of(a held string) at the limit: not shared")
	}
	tab.of("one more")
	if got := len(tab.m); got != 1 {
		t.Errorf("strings held after one over the limit = %d, want 1 (the table starts over)", got)
	}
}
