package strtable

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestOf(t *testing.T) {
	long := strings.Repeat("x", MaxLen)
	tests := []struct {
		name  string
		s     string
		share bool
	}{
		{"short", "validation rule 'check' passed.", true},
		{"at the max length", long, true},
		{"over the max length", long + "x", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tab Table
			first := tab.Of(strings.Clone(tt.s))
			got := tab.Of(strings.Clone(tt.s))
			if got != tt.s {
				t.Errorf("Of(%d bytes) = %d bytes, want the same string", len(tt.s), len(got))
			}
			if tt.s != "" && same(got, first) != tt.share {
				t.Errorf("Of(%d bytes) shared = %v, want %v", len(tt.s), same(got, first), tt.share)
			}
		})
	}
}

// TestFull: a Table holds at most MaxStrings strings, then starts over.
func TestFull(t *testing.T) {
	var tab Table
	key := func(i int) string { return "s" + strconv.Itoa(i) }
	for i := range MaxStrings {
		tab.Of(key(i))
	}
	if got := tab.Len(); got != MaxStrings {
		t.Fatalf("Len() at the limit = %d, want %d", got, MaxStrings)
	}
	first := tab.Of(key(0))
	if got := tab.Of(strings.Clone(key(0))); !same(got, first) {
		t.Errorf("Of(a held string) at the limit: not shared")
	}
	tab.Of("one more")
	if got := tab.Len(); got != 1 {
		t.Errorf("Len() after one over the limit = %d, want 1 (the table starts over)", got)
	}
}
