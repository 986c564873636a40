package eval

import (
	"fmt"
	"testing"

	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/variables"
)

// TestParseCachesBounded checks that the caches of what is parsed at
// evaluation stop growing at maxParsed entries and still answer past it.
func TestParseCachesBounded(t *testing.T) {
	count := func(m interface{ Range(func(k, v any) bool) }) int {
		n := 0
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	tests := []struct {
		name  string
		parse func(e *Engine, i int) error
		size  func(e *Engine) int
	}{
		{"expressions", func(e *Engine, i int) error {
			_, err := e.parsed.get(fmt.Sprintf("a.b%d", i), jmespath.Parse)
			return err
		}, func(e *Engine) int { return count(&e.parsed.m) }},
		{"templates", func(e *Engine, i int) error {
			_, err := e.templates.get(fmt.Sprintf("message {{ request.object.metadata.name }} %d", i), variables.Parse)
			return err
		}, func(e *Engine) int { return count(&e.templates.m) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{})
			for i := range maxParsed + 10 {
				if err := tt.parse(e, i); err != nil {
					t.Fatalf("parse(%d) = %v, want no error", i, err)
				}
			}
			if got := tt.size(e); got != maxParsed {
				t.Errorf("cached entries after %d texts = %d, want %d", maxParsed+10, got, maxParsed)
			}
		})
	}
}
