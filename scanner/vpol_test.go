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

// vpolTeam is a ValidatingPolicy that requires the label team on Pods
// (and, through autogen, on Deployments).
const vpolTeam = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: vpol-team
spec:
  validationActions: [Audit]
  autogen:
    podControllers:
      controllers: [deployments]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: the label team is required
`

// vpolAdmissionOnly is vpolTeam with background evaluation disabled.
var vpolAdmissionOnly = strings.Replace(strings.Replace(vpolTeam, "name: vpol-team", "name: vpol-admission-only", 1),
	"  validationActions: [Audit]\n", "  validationActions: [Audit]\n  evaluation:\n    background:\n      enabled: false\n", 1)

// TestScanValidatingPolicies: a background scan evaluates the
// ValidatingPolicies whose evaluation.background.enabled is true (the
// default), on the resources of their resourceRules and autogen
// controllers.
func TestScanValidatingPolicies(t *testing.T) {
	ts := startServer(t, vpolTeam, vpolAdmissionOnly)
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
	if diff := cmp.Diff([]string{"vpol-team"}, keys); diff != "" {
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
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: dev}
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
		{"dev/Pod/a", "vpol-team", "", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/b", "vpol-team", "", verdictv1.Result_RESULT_FAIL},
	}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan results (-want +got):\n%s", diff)
	}
}
