package server

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
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

// TestVersionOf checks that responses share one PolicyVersion message per
// policy version, with the policy's fields, and that the cache starts over
// when full.
func TestVersionOf(t *testing.T) {
	a := compileTestPolicy(t, "ClusterPolicy", "", "a")
	b := compileTestPolicy(t, "Policy", "team", "b")
	va, vb := versionOf(a), versionOf(b)
	want := &verdictv1.PolicyVersion{Kind: "Policy", Namespace: "team", Name: "b", ContentHash: b.Hash(), Background: b.Background}
	if diff := cmp.Diff(want, vb, protocmp.Transform()); diff != "" {
		t.Errorf("versionOf(team/b) (-want +got):\n%s", diff)
	}
	if versionOf(a) != va || va == vb {
		t.Errorf("versionOf() gives a policy a new message, or two policies one message")
	}
	versionsN.Store(maxVersions)
	c := compileTestPolicy(t, "ClusterPolicy", "", "c")
	versionOf(c)
	if n := versionsN.Load(); n != 1 {
		t.Errorf("versions cache after reaching %d entries counts %d, want 1 (emptied, then c)", maxVersions, n)
	}
	if got := versionOf(a); got == va || !proto.Equal(got, va) {
		t.Errorf("versionOf(a) after the cache was emptied: same message %v, equal %v; want a new, equal one", got == va, proto.Equal(got, va))
	}
}
