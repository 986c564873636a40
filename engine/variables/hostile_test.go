package variables

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

// Strings of a policy built to make the parser or the compile-time check
// work hard: each is a clear *engine.Error with a short message, after a
// bounded amount of work.
func TestParseHostileTemplates(t *testing.T) {
	const n = 100_000
	tests := []struct {
		name        string
		give        string
		wantLimit   string // the *jmespath.LimitError, if any
		wantMessage string
	}{
		// 64 passes over a 1.2 MB string took five seconds; maxScan stops
		// them after four.
		{name: "variables nested a hundred thousand deep", give: strings.Repeat("{{ a.", n) + "b" + strings.Repeat(" }}", n),
			wantMessage: "searches more than 4194304 bytes for variables"},
		{name: "braces", give: strings.Repeat("{{", n) + "a" + strings.Repeat("}}", n)},
		{name: "hostile expression", give: "{{ " + strings.Repeat("(", n) + "a" + strings.Repeat(")", n) + " }}", wantLimit: "MaxExpressionBytes"},
		{name: "hostile nested expression", give: "{{ a.{{ " + strings.Repeat("!", 60_000) + "b }} }}", wantLimit: "MaxExpressionNesting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(tt.give)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Parse(%s) took %v", tt.name, d)
			}
			var e *engine.Error
			if !errors.As(err, &e) || e.Code != engine.CodeInvalidVariable {
				t.Fatalf("Parse(%s) error = %.200v, want an *engine.Error with Code %q", tt.name, err, engine.CodeInvalidVariable)
			}
			if !strings.Contains(e.Message, tt.wantMessage) {
				t.Errorf("Parse(%s) error message = %.200q, want it to contain %q", tt.name, e.Message, tt.wantMessage)
			}
			if len(e.Message) > 1024 {
				t.Errorf("Parse(%s) error message of %d bytes, want at most 1024", tt.name, len(e.Message))
			}
			var le *jmespath.LimitError
			if tt.wantLimit != "" && (!errors.As(err, &le) || le.Limit != tt.wantLimit) {
				t.Errorf("Parse(%s) error = %.200v, want a *jmespath.LimitError of %s", tt.name, err, tt.wantLimit)
			}
		})
	}
}

// The strings of a value that holds variables are searched (once, and
// again after each pass); the bytes searched per Render are bounded.
func TestRenderScanLimit(t *testing.T) {
	s := strings.Repeat("x", maxScan/8) + "{{ b }}" // searched twice: maxScan/4
	tmpl := mustParse(t, "{{ a }}")
	resolve := func(n int) Resolver {
		list := make([]any, n)
		for i := range list {
			list[i] = s
		}
		return scope(map[string]any{"a": list, "b": "y"})
	}
	if _, err := tmpl.Render(Env{Resolve: resolve(3)}); err != nil {
		t.Errorf("Render(three values of %d bytes with variables) = %v, want no error", len(s), err)
	}
	_, err := tmpl.Render(Env{Resolve: resolve(5)})
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeEvaluation || !strings.Contains(e.Message, "searches more than") {
		t.Errorf("Render(five values of %d bytes with variables) = %v, want the maxScan error", len(s), err)
	}
}
