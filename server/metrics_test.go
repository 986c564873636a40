package server

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/engine/eval"
)

// TestPolicyCounters checks the per-policy counter list under concurrent
// use: one counter per rule labels, whoever adds it first, and lookups
// that see every counter once added.
func TestPolicyCounters(t *testing.T) {
	var pc policyCounters
	keys := []ruleLabels{
		{rule: "a", status: eval.StatusPass, typ: eval.RuleValidation},
		{rule: "a", status: eval.StatusFail, typ: eval.RuleValidation},
		{rule: "a", status: eval.StatusFail, typ: eval.RuleValidation, enforce: true},
		{rule: "b", status: eval.StatusPass, typ: eval.RuleMutation},
	}
	var made sync.Map // ruleLabels -> number of counters made
	var wg sync.WaitGroup
	got := make([][]prometheus.Counter, 8)
	for g := range got {
		wg.Go(func() {
			for range 100 {
				for _, k := range keys {
					c := pc.lookup(k)
					if c == nil {
						c = pc.add(k, func() prometheus.Counter {
							n, _ := made.LoadOrStore(k, new(int))
							*n.(*int)++ // only under pc.mu
							return prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
						})
					}
					got[g] = append(got[g], c)
				}
			}
		})
	}
	wg.Wait()
	for _, k := range keys {
		n, ok := made.Load(k)
		if !ok || *n.(*int) != 1 {
			t.Errorf("counters made for %+v = %v, want 1", k, n)
		}
	}
	for g := range got {
		for i, c := range got[g] {
			if want := pc.lookup(keys[i%len(keys)]); c != want {
				t.Fatalf("goroutine %d, call %d: counter %p, want %p (the one lookup returns)", g, i, c, want)
			}
		}
	}
	if l := pc.list.Load(); len(*l) != len(keys) {
		t.Errorf("len(list) = %d, want %d", len(*l), len(keys))
	}
}
