package jmespath

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSimplePath pins which queries take a direct walk and that the walk
// gives the interpreter's result, error included.
func TestSimplePath(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := testDoc(t)
	for _, tt := range []struct {
		expr string
		fast string // "path", "or" or "" (the interpreter)
	}{
		{"s", "path"},
		{"nested.a.b[2].c", "path"},
		{"nested.a.b[-1].c", "path"},
		{"nested.a.b[7].c", "path"},
		{"nested.a.b[0].c", "path"},
		{"nested.missing.c", "path"},
		{"nested.a.missing", "path"},
		{"list[1]", "path"},
		{"s[0]", "path"},
		{"s.x", "path"},
		{"@", "path"},
		{"@.obj.team", "path"},
		{`"obj"."team"`, "path"},
		{"mixed[3].x", "path"},
		{"mixed[3][0]", "path"},
		{"s || 'x'", "or"},
		{"missing || 'x'", "or"},
		{"nested.missing.c || 'x'", "or"},
		{"empty || `[1]`", "or"},
		{"mixed[2] || 'x'", "or"},
		{"n || 'x'", "or"},
		{"f || 'x'", "or"},
		{"obj || 'x'", "or"},
		{"s.x || `{}`", "or"},
		{"list[]", ""},
		{"list[*]", ""},
		{"list[0:1]", ""},
		{"to_upper(s)", ""},
		{"nested.a.b[?c]", ""},
		{"to_upper(s) || 'x'", ""},
		{"s || t1", ""},
		{"'x' || s", ""},
	} {
		q, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.expr, err)
		}
		fast := ""
		switch {
		case q.simple:
			fast = "path"
		case q.or:
			fast = "or"
		}
		if fast != tt.fast {
			t.Errorf("Parse(%q) takes %q, want %q", tt.expr, fast, tt.fast)
		}
		got, gotErr := in.Search(q, doc)
		want, wantErr := in.search(q, doc)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Search(%q) (-interpreter +walk):\n%s", tt.expr, diff)
		}
		if errString(gotErr) != errString(wantErr) {
			t.Errorf("Search(%q) error = %v, want %v", tt.expr, gotErr, wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzSimplePath checks the direct walks against go-jmespath's interpreter
// for every simple path (and path || literal) the fuzzer finds.
//
//	go test ./engine/jmespath/ -run '^$' -fuzz FuzzSimplePath -fuzztime 60s
func FuzzSimplePath(f *testing.F) {
	for _, s := range []string{"nested.a.b[2].c", "list[-1]", "obj.team", "mixed[3].a", "@.s", `"nested".a`, "nested.a.b[1][0]", "s || 'x'", "nested.q || `[]`", "empty || `{\"a\": 1}`"} {
		f.Add(s)
	}
	in := newTestInterpreter(Options{})
	doc := fuzzDoc()
	f.Fuzz(func(t *testing.T, expr string) {
		q, err := Parse(expr)
		if err != nil || !q.simple && !q.or {
			return
		}
		got, gotErr := in.Search(q, doc)
		want, wantErr := in.search(q, doc)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Search(%q) (-interpreter +walk):\n%s", expr, diff)
		}
		if errString(gotErr) != errString(wantErr) {
			t.Fatalf("Search(%q) error = %v, want %v", expr, gotErr, wantErr)
		}
	})
}

func TestMissing(t *testing.T) {
	in := newTestInterpreter(Options{})
	doc := testDoc(t)
	for _, tt := range []struct {
		expr string
		want bool
	}{
		{"s", false},
		{"nope", true},
		{"nested.a.nope", true},
		{"nested.a.b[9].c", false}, // an index out of range is null
		{"s.x", false},             // a field of a string goes to the interpreter
		{"nope || 'x'", false},
		{"to_upper(nope)", false},
	} {
		q, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.expr, err)
		}
		if got := q.Missing(doc); got != tt.want {
			t.Errorf("Parse(%q).Missing() = %v, want %v", tt.expr, got, tt.want)
		}
		// Missing is exactly Search's not-found error for simple paths.
		if _, err := in.Search(q, doc); q.simple && IsNotFound(err) != tt.want {
			t.Errorf("Search(%q) error = %v, but Missing() = %v", tt.expr, err, tt.want)
		}
	}
}
