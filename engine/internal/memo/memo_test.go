package memo

import (
	"fmt"
	"testing"
)

func TestBounded(t *testing.T) {
	c := New[string, *string](2)
	made := 0
	mk := func(k string) *string { made++; s := "v" + k; return &s }
	first := c.Get("a", mk)
	if again := c.Get("a", mk); again != first || made != 1 {
		t.Errorf("Get(a) twice: same value %v, made %d times; want the cached value, made once", again == first, made)
	}
	c.Get("b", mk)
	// Full: c is made on every Get and never stored.
	x, y := c.Get("c", mk), c.Get("c", mk)
	if x == y || *x != "vc" || made != 4 {
		t.Errorf("Get(c) on a full cache: distinct values %v, %q, made %d times; want two made values, 4 makes in all", x != y, *x, made)
	}
	if n := c.Len(); n != 2 {
		t.Errorf("Len() = %d, want 2", n)
	}
	if got := c.Get("b", mk); *got != "vb" || made != 4 {
		t.Errorf("Get(b) = %q after %d makes, want the cached vb after 4", *got, made)
	}
}

func BenchmarkBoundedHit(b *testing.B) {
	c := New[string, string](16)
	mk := func(k string) string { return fmt.Sprint("m ", k) }
	c.Get("rule", mk)
	for b.Loop() {
		c.Get("rule", mk)
	}
}
