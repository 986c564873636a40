package reportwriter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGroup pins what results share an entry: the same policy, rule and
// outcome (source, category, severity, result, scored, message,
// properties); the entry lists their resources in order and takes the
// newest timestamp.
func TestGroup(t *testing.T) {
	res := func(name string) []ObjectReference {
		return []ObjectReference{{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: name}}
	}
	base := func(rule, name string, ts int64) ReportResult {
		return ReportResult{Source: "kyverno", Policy: "p", Rule: rule, Result: "pass", Scored: true,
			Message: "ok", Timestamp: Timestamp{Seconds: ts}, Resources: res(name),
			Properties: map[string]string{"process": "background scan"}}
	}
	failB := base("r1", "b", 5)
	failB.Result, failB.Message = "fail", "bad"
	warnC := base("r1", "c", 5)
	warnC.Scored = false
	propsD := base("r1", "d", 5)
	propsD.Properties = map[string]string{"process": "admission review"}
	in := []ReportResult{
		base("r1", "a", 3), failB, warnC, propsD, base("r1", "e", 9), base("r1", "f", 1),
		base("r2", "a", 2), base("r2", "b", 2),
	}
	got := group(in)
	type entry struct {
		Rule, Result, Message string
		Scored                bool
		Process               string
		Seconds               int64
		Names                 []string
	}
	var gotEntries []entry
	for _, g := range got {
		e := entry{g.Rule, g.Result, g.Message, g.Scored, g.Properties["process"], g.Timestamp.Seconds, nil}
		for _, r := range g.Resources {
			e.Names = append(e.Names, r.Name)
		}
		gotEntries = append(gotEntries, e)
	}
	want := []entry{
		{"r1", "pass", "ok", true, "background scan", 9, []string{"a", "e", "f"}},
		{"r1", "fail", "bad", true, "background scan", 5, []string{"b"}},
		{"r1", "pass", "ok", false, "background scan", 5, []string{"c"}},
		{"r1", "pass", "ok", true, "admission review", 5, []string{"d"}},
		{"r2", "pass", "ok", true, "background scan", 2, []string{"a", "b"}},
	}
	if diff := cmp.Diff(want, gotEntries); diff != "" {
		t.Errorf("group() (-want +got):\n%s", diff)
	}
	// The input keeps its single resources (the summary counts them).
	for i, r := range in {
		if len(r.Resources) != 1 {
			t.Errorf("group() changed input %d: %d resources", i, len(r.Resources))
		}
	}
}
