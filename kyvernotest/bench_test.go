package kyvernotest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/internal/policyreport"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// writeApplyCorpus writes nPolicies ClusterPolicies (a pattern rule and a
// deny rule each, on Pods) and nResources Pods and Deployments into dir.
func writeApplyCorpus(tb testing.TB, dir string, nPolicies, nResources int) (policies, resources string) {
	tb.Helper()
	var p strings.Builder
	for i := 0; i < nPolicies; i++ {
		fmt.Fprintf(&p, `---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-%d
spec:
  validationFailureAction: Audit
  rules:
  - name: require-label
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "label l%d is required"
      pattern:
        metadata:
          labels:
            l%d: "?*"
  - name: no-latest
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "image {{ request.object.spec.containers[0].image }} uses latest"
      deny:
        conditions:
          any:
          - key: "{{ request.object.spec.containers[].image }}"
            operator: AnyIn
            value: ["*:latest"]
`, i, i%5, i%5)
	}
	var r strings.Builder
	for i := 0; i < nResources; i++ {
		if i%4 == 0 {
			fmt.Fprintf(&r, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy-%d
  namespace: ns-%d
spec:
  selector:
    matchLabels:
      app: a%d
  template:
    metadata:
      labels:
        app: a%d
        l%d: "yes"
    spec:
      containers:
      - name: c
        image: nginx:1.%d
`, i, i%7, i, i, i%5, i%30)
			continue
		}
		fmt.Fprintf(&r, `---
apiVersion: v1
kind: Pod
metadata:
  name: pod-%d
  namespace: ns-%d
  labels:
    l%d: "yes"
spec:
  containers:
  - name: c
    image: nginx:%s
`, i, i%7, i%5, map[bool]string{true: "latest", false: "1.25"}[i%10 == 0])
	}
	policies, resources = filepath.Join(dir, "policies.yaml"), filepath.Join(dir, "resources.yaml")
	if err := os.WriteFile(policies, []byte(p.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(resources, []byte(r.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return policies, resources
}

// BenchmarkApply applies 30 policies to 2000 resources, loading included.
func BenchmarkApply(b *testing.B) {
	policies, resources := writeApplyCorpus(b, b.TempDir(), 30, 2000)
	opts := ApplyOptions{PolicyPaths: []string{policies}, ResourcePaths: []string{resources}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Apply(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Counts.Pass == 0 || res.Counts.Fail == 0 {
			b.Fatalf("Apply() counts = %+v, want passes and failures", res.Counts)
		}
	}
}

// BenchmarkRunTestdata runs the package's test suites.
func BenchmarkRunTestdata(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), []string{"testdata"}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunCorpus runs every test suite of the kyverno/policies corpus
// (as `verdict test` of its folder does). It skips when the corpus is
// absent.
func BenchmarkRunCorpus(b *testing.B) {
	dir, ok := testcorpus.Corpus("")
	if !ok {
		b.Skip("no kyverno/policies corpus next to the repository")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rep, err := Run(context.Background(), []string{dir}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Passed == 0 {
			b.Fatalf("Run(%s) passed = 0, want the corpus's results", dir)
		}
	}
}

// BenchmarkWriteReportsYAML writes a policy report of 10,000 results as
// apply --policy-report does: messages long enough to be folded, quoted
// and plain, properties and resources.
func BenchmarkWriteReportsYAML(b *testing.B) {
	rep := policyreport.PolicyReport{APIVersion: policyreport.OpenReportsAPIVersion, Kind: policyreport.KindClusterReport, Metadata: policyreport.Metadata{Name: "merged"}}
	for i := range 10000 {
		msg := "validation rule 'check-for-labels' passed."
		result := "pass"
		if i%2 == 0 {
			msg = "validation error: The label `app.kubernetes.io/name` is required. rule check-for-labels failed at path /metadata/labels/"
			result = "fail"
		}
		rep.Results = append(rep.Results, policyreport.Result{
			Category: "Best Practices", Message: msg, Policy: "require-labels", Rule: "check-for-labels",
			Result: result, Scored: true, Severity: "medium", Source: "kyverno",
			Properties: map[string]string{"process": "background scan"},
			Resources:  []policyreport.ObjectReference{{APIVersion: "v1", Kind: "Pod", Name: "pod-" + strconv.Itoa(i), Namespace: "default"}},
			Timestamp:  policyreport.Timestamp{Seconds: 1795750141},
		})
		rep.Summary.Add(result)
	}
	reports := []policyreport.PolicyReport{rep}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteReports(io.Discard, reports, "yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
