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

// vapReplicas is a ValidatingAdmissionPolicy on Deployments, labelled for
// Kyverno's background reports; vapReplicasWeb binds it to the app web.
const vapReplicas = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: vap-replicas
  labels: {reports.kyverno.io/enabled: "true"}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: object.spec.replicas <= 2
`

const vapReplicasWeb = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: vap-replicas-web}
spec:
  policyName: vap-replicas
  validationActions: [Deny]
  matchResources:
    objectSelector: {matchLabels: {app: web}}
`

// TestScanValidatingAdmissionPolicies: a background scan evaluates the
// ValidatingAdmissionPolicies labelled reports.kyverno.io/enabled: "true"
// (as Kyverno's reports controller does), on the resources of their
// matchConstraints, through their bindings.
func TestScanValidatingAdmissionPolicies(t *testing.T) {
	unlabelled := strings.Replace(strings.Replace(vapReplicas, "name: vap-replicas\n", "name: vap-unlabelled\n", 1),
		"  labels: {reports.kyverno.io/enabled: \"true\"}\n", "", 1)
	ts := startServer(t, vapReplicas, vapReplicasWeb, unlabelled)
	set, err := scanner.LoadPolicies(context.Background(), ts.client)
	if err != nil {
		t.Fatal(err)
	}
	var keys, kinds []string
	for _, p := range set.Background {
		keys = append(keys, p.Kind+" "+p.Key())
		for _, k := range p.Kinds {
			kinds = append(kinds, k.String())
		}
	}
	if diff := cmp.Diff([]string{"ValidatingAdmissionPolicy vap-replicas"}, keys); diff != "" {
		t.Errorf("LoadPolicies background policies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"apps/v1/deployments"}, kinds); diff != "" {
		t.Errorf("LoadPolicies background kinds (-want +got):\n%s", diff)
	}

	dir := writeFiles(t, map[string]string{"deployments.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: small, namespace: dev, labels: {app: web}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: dev, labels: {app: web}}
spec: {replicas: 3}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other, namespace: dev, labels: {app: batch}}
spec: {replicas: 3}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: dev, labels: {app: web}}
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
		{"dev/Deployment/small", "vap-replicas", "vap-replicas", verdictv1.Result_RESULT_PASS},
		{"dev/Deployment/big", "vap-replicas", "vap-replicas", verdictv1.Result_RESULT_FAIL},
	}
	if diff := cmp.Diff(want, outcomes(sink.results)); diff != "" {
		t.Errorf("Scan results (-want +got):\n%s", diff)
	}
}
