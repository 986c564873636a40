package scanner_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/scanner"
)

// ivpolDigest is an ImageValidatingPolicy on the images of
// registry.example in Pods (and, through autogen, Deployments): a tag
// fails verifyDigest without a registry call.
const ivpolDigest = `apiVersion: policies.kyverno.io/v1
kind: ImageValidatingPolicy
metadata:
  name: ivpol-digest
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
  matchImageReferences:
  - glob: "registry.example/*"
  attestors:
  - name: cosign
    cosign:
      key: {data: unused}
  validations:
  - expression: "images.containers.all(image, verifyImageSignatures(image, [attestors.cosign]) > 0)"
`

// TestScanImageValidatingPolicies: a background scan evaluates the
// ImageValidatingPolicies on the resources of their resourceRules and
// autogen controllers.
func TestScanImageValidatingPolicies(t *testing.T) {
	ts := startServer(t, ivpolDigest)
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
	if diff := cmp.Diff([]string{"ivpol-digest"}, keys); diff != "" {
		t.Errorf("LoadPolicies background policies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"core/v1/pods", "apps/v1/deployments"}, kinds); diff != "" {
		t.Errorf("LoadPolicies background kinds (-want +got):\n%s", diff)
	}
	dir := writeFiles(t, map[string]string{"pods.yaml": `apiVersion: v1
kind: Pod
metadata: {name: a, namespace: dev}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: dev}
spec: {containers: [{name: c, image: "registry.example/app:v1"}]}
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
		{"dev/Pod/a", "ivpol-digest", "ivpol-digest", verdictv1.Result_RESULT_PASS},
		{"dev/Pod/b", "ivpol-digest", "ivpol-digest", verdictv1.Result_RESULT_FAIL},
	}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan results (-want +got):\n%s", diff)
	}
}
