package server

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

func compileTestPolicy(t *testing.T, kind, ns, name string) *policy.Policy {
	t.Helper()
	y := fmt.Sprintf(`apiVersion: kyverno.io/v1
kind: %s
metadata: {name: %s, namespace: %q}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {metadata: {name: "*"}}}
`, kind, name, ns)
	docs, err := kyverno.DecodePolicies("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGroupResults groups interleaved results by policy, in the order
// policies first appear, keeping each policy's results in order, and drops
// a result of a policy that was not evaluated.
func TestGroupResults(t *testing.T) {
	a := compileTestPolicy(t, "ClusterPolicy", "", "a")
	b := compileTestPolicy(t, "ClusterPolicy", "", "b")
	bNS := compileTestPolicy(t, "Policy", "team", "b")
	policies := []*policy.Policy{a, b, bNS}
	results := []eval.RuleResult{
		{Policy: "b", Rule: "m1"},
		{Policy: "a", Rule: "v1"},
		{Policy: "b", PolicyNamespace: "team", Rule: "v1"},
		{Policy: "gone", Rule: "v1"},
		{Policy: "a", Rule: "v2"},
		{Policy: "b", Rule: "v1"},
		{Policy: "a", Rule: "g1"},
	}
	got := map[string][]string{}
	var order []string
	for _, g := range groupResults(policies, results) {
		key := g.policy.Namespace() + "/" + g.policy.Name()
		order = append(order, key)
		for _, r := range g.results {
			got[key] = append(got[key], r.Rule)
		}
	}
	if diff := cmp.Diff([]string{"/b", "/a", "team/b"}, order); diff != "" {
		t.Errorf("groupResults() order (-want +got):\n%s", diff)
	}
	want := map[string][]string{"/a": {"v1", "v2", "g1"}, "/b": {"m1", "v1"}, "team/b": {"v1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groupResults() rules (-want +got):\n%s", diff)
	}
	if g := groupResults(policies, nil); g != nil {
		t.Errorf("groupResults(no results) = %v, want nil", g)
	}
}
