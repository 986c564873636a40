package scanner_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// listedSource is a Source of resources listed from an API resource, as
// Cluster.Source gives them: each with the GVR it was listed from.
type listedSource []*scanner.Resource

func (s listedSource) List(_ context.Context, _ scanner.Shard, v scanner.Visitor) error {
	v.Expect(len(s))
	for _, r := range s {
		if err := v.Visit(r); err != nil {
			return err
		}
	}
	return nil
}

// TestScanValidatingPolicyResource: a resource listed from a cluster
// carries the resource it was listed from, which the resourceRules of a
// ValidatingPolicy match; the plural guessed from the kind (octopuses)
// is not the CRD's (octopi), so a resource from a file, which has none,
// is not matched.
func TestScanValidatingPolicyResource(t *testing.T) {
	ts := startServer(t, `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: octopus-arms
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - {apiGroups: [sea.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [octopi]}
  validations:
  - expression: "object.spec.arms == 8"
    message: an octopus has 8 arms
`)
	octopus := func(name string, arms int, gvr schema.GroupVersionResource) *scanner.Resource {
		r := &scanner.Resource{
			Object: map[string]any{
				"apiVersion": "sea.example.com/v1", "kind": "Octopus",
				"metadata": map[string]any{"name": name, "namespace": "sea", "uid": name},
				"spec":     map[string]any{"arms": int64(arms)},
			},
			APIVersion: "sea.example.com/v1", Kind: "Octopus", Namespace: "sea", Name: name, UID: name,
			GVR: gvr,
		}
		return r
	}
	octopi := schema.GroupVersionResource{Group: "sea.example.com", Version: "v1", Resource: "octopi"}
	src := listedSource{
		octopus("listed-7", 7, octopi),
		octopus("listed-8", 8, octopi),
		octopus("from-a-file", 7, schema.GroupVersionResource{}),
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
		{"sea/Octopus/listed-7", "octopus-arms", "", verdictv1.Result_RESULT_FAIL},
		{"sea/Octopus/listed-8", "octopus-arms", "", verdictv1.Result_RESULT_PASS},
	}
	got := outcomes(sink.results)
	sort.Slice(got, func(i, j int) bool { return got[i].Resource < got[j].Resource })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan results (-want +got):\n%s", diff)
	}
}
