package jmespath

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine"
)

// testNow is the clock of every test interpreter.
var testNow = time.Date(2024, 3, 15, 10, 30, 0, 0, time.UTC)

// testDocJSON is the document the function tests query.
const testDocJSON = `{
  "s": "Hello World",
  "n": 3,
  "f": 2.5,
  "big": 1234567891,
  "list": ["b", "a", "c"],
  "nums": [3, 1, 2],
  "obj": {"team": "apple", "org": "banana"},
  "labels": {"app": "x", "tier": "web"},
  "sel": {"app": "x"},
  "empty": [],
  "mixed": [1, "a", true, null],
  "quantities": ["1Ki", "2Ki"],
  "durations": ["1s", "2h"],
  "t1": "2021-01-02T15:04:05Z",
  "t2": "2021-01-03T16:05:06+01:00",
  "nested": {"a": {"b": [1, 2, {"c": "d"}]}}
}`

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("json.Unmarshal(%q) = %v", s, err)
	}
	return v
}

func testDoc(t *testing.T) any {
	t.Helper()
	return decodeJSON(t, testDocJSON)
}

// fuzzDoc is testDoc for fuzz targets, which decode it once outside any test.
func fuzzDoc() any {
	var v any
	if err := json.Unmarshal([]byte(testDocJSON), &v); err != nil {
		panic(err)
	}
	return v
}

// newTestInterpreter returns an interpreter with testNow and a fixed random
// seed unless opts sets them.
func newTestInterpreter(opts Options) *Interpreter {
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	if opts.Rand == nil {
		opts.Rand = rand.NewPCG(1, 2)
	}
	return New(opts)
}

// search parses and evaluates expr; a parse error ends the test.
func search(t *testing.T, in *Interpreter, expr string, data any) (any, error) {
	t.Helper()
	q, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", expr, err)
	}
	return in.Search(q, data)
}

type searchTest struct {
	name     string
	giveExpr string
	want     any
}

type searchErrorTest struct {
	name     string
	giveExpr string
	wantCode engine.Code
}

// runSearchTests evaluates every row against the test document.
func runSearchTests(t *testing.T, in *Interpreter, tests []searchTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := search(t, in, tt.giveExpr, testDoc(t))
			if err != nil {
				t.Fatalf("Search(%q) error = %v, want none", tt.giveExpr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) mismatch (-want +got):\n%s", tt.giveExpr, diff)
			}
		})
	}
}

// runSearchErrorTests evaluates every row against the test document and
// checks the error code.
func runSearchErrorTests(t *testing.T, in *Interpreter, tests []searchErrorTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := search(t, in, tt.giveExpr, testDoc(t))
			if err == nil {
				t.Fatalf("Search(%q) = %#v, want error %s", tt.giveExpr, got, tt.wantCode)
			}
			if code := errorCode(err); code != tt.wantCode {
				t.Errorf("Search(%q) error code = %q (%v), want %q", tt.giveExpr, code, err, tt.wantCode)
			}
		})
	}
}

// errorCode returns the code of an *engine.Error, or "" for other errors.
func errorCode(err error) engine.Code {
	var e *engine.Error
	if !errors.As(err, &e) {
		return ""
	}
	return e.Code
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
