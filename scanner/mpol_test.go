package scanner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// mpolTeam is a MutatingPolicy that adds the label team: x to Pods (and,
// through autogen, to the Pod template of Deployments).
const mpolTeam = `apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: mpol-team
spec:
  autogen:
    podControllers:
      controllers: [deployments]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "x"}}}'
`

// mpolAdmissionOnly is mpolTeam with background evaluation disabled.
var mpolAdmissionOnly = strings.Replace(strings.Replace(mpolTeam, "name: mpol-team", "name: mpol-admission-only", 1),
	"spec:\n", "spec:\n  evaluation:\n    background:\n      enabled: false\n", 1)

// TestScanMutatingPolicies: a background scan evaluates the
// MutatingPolicies whose evaluation.background.enabled is true (the
// default), on the resources of their resourceRules and autogen
// controllers, and reports, as Kyverno's background scans do, a pass for
// a resource the mutation leaves as it is and a fail ("mutation is not
// applied") for one it would change.
func TestScanMutatingPolicies(t *testing.T) {
	ts := startServer(t, mpolTeam, mpolAdmissionOnly)
	set, err := scanner.LoadPolicies(context.Background(), ts.client)
	if err != nil {
		t.Fatal(err)
	}
	var keys, kinds []string
	for _, p := range set.Background {
		keys = append(keys, p.Key())
		for _, k := range p.Kinds {
			kinds = append(kinds, k.String())
		}
	}
	if diff := cmp.Diff([]string{"mpol-team"}, keys); diff != "" {
		t.Errorf("LoadPolicies background policies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"core/v1/pods", "apps/v1/deployments"}, kinds); diff != "" {
		t.Errorf("LoadPolicies background kinds (-want +got):\n%s", diff)
	}

	dir := writeFiles(t, map[string]string{"pods.yaml": `apiVersion: v1
kind: Pod
metadata: {name: a, namespace: dev, labels: {team: x}}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: dev, labels: {app: x}}
spec: {containers: [{name: c, image: nginx}]}
`})
	src, err := scanner.NewFileSource(context.Background(), []string{dir}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	s, err := scanner.New(ts.client, scanner.Options{Linger: time.Millisecond, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	want := []outcome{
		{"dev/Pod/a", "mpol-team", "", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/b", "mpol-team", "", verdictv1.Result_RESULT_FAIL},
	}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan results (-want +got):\n%s", diff)
	}
	for _, r := range sink.results {
		if p := r.Response.GetJsonPatch(); len(p) > 0 {
			t.Errorf("Scan(%s) = patch %s, want none", r.Resource, p)
		}
	}
}
