package cases

import "testing"

// Runner replays the corpus for a test.
type Runner struct {
	// Exceptions is the runner's exceptions file (see LoadExceptions);
	// empty for none.
	Exceptions string
	// Skip, when set, leaves out the cases the runner does not replay at
	// all (such as background scans for an admission runner).
	Skip func(c *Case) bool
	// Parallel runs the cases in parallel.
	Parallel bool
}

// Run replays every case as a subtest named by its note: run gives what
// the runner got, Diff compares it. A case listed in the exceptions is
// skipped with its reason, and fails when it passes (the list stays
// true); an exception that names no case fails too.
func (r Runner) Run(t *testing.T, run func(t *testing.T, c Case) Outcome) {
	t.Helper()
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	exceptions := map[string]string{}
	if r.Exceptions != "" {
		if exceptions, err = LoadExceptions(r.Exceptions); err != nil {
			t.Fatal(err)
		}
	}
	known := map[string]bool{}
	for _, c := range all {
		known[c.Note] = true
		if r.Skip != nil && r.Skip(&c) {
			continue
		}
		t.Run(c.Note, func(t *testing.T) {
			if r.Parallel {
				t.Parallel()
			}
			diff := c.Diff(run(t, c))
			reason, excepted := exceptions[c.Note]
			switch {
			case excepted && diff == "":
				t.Errorf("case %s passes, but %s lists it (%s)", c.Note, r.Exceptions, reason)
			case excepted:
				t.Skip(reason)
			case diff != "":
				t.Errorf("case %s:\n%s", c.Note, diff)
			}
		})
	}
	for note := range exceptions {
		if !known[note] {
			t.Errorf("%s lists %q, not a case", r.Exceptions, note)
		}
	}
}
