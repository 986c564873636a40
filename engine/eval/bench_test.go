package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// corpus is the kyverno/policies corpus, present next to the repository in
// development and CI.
const corpus = "../../../shared/conformance/kyverno-policies"

// corpusPolicies compiles the ClusterPolicies of the given corpus folders,
// skipping the benchmark when the corpus is absent.
func corpusPolicies(tb testing.TB, folders ...string) []*policy.Policy {
	tb.Helper()
	var out []*policy.Policy
	for _, f := range folders {
		root := filepath.Join(corpus, f)
		if _, err := os.Stat(root); err != nil {
			tb.Skipf("corpus not present: %v", err)
		}
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if d.IsDir() || filepath.Ext(path) != ".yaml" || d.Name() == "artifacthub-pkg.yml" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			docs, err := kyverno.DecodePolicies(path, data)
			if err != nil {
				return nil // not a policy file
			}
			for _, doc := range docs {
				p, err := policy.Compile(doc)
				if err != nil {
					tb.Fatalf("Compile(%s) = %v", path, err)
				}
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

func object(tb testing.TB, y string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

const benchDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
  labels: {app.kubernetes.io/name: api}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api, app.kubernetes.io/name: api}
    spec:
      hostNetwork: true
      containers:
      - name: api
        image: registry.example.com/checkout/api:latest
        resources:
          requests: {cpu: 250m, memory: 512Mi}
          limits: {memory: 4Gi}
        securityContext: {privileged: true}
`

// benchPod is the Pod the engine and decision server benchmarks share.
func benchPod(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile("../testdata/bench/pod.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// BenchmarkEvaluate evaluates a Pod and a Deployment against the
// pod-security and best-practices policies of the corpus, at admission
// and in a background scan (no mutate or generate rules, as the decision
// server's EvaluateStream runs for scans). Compilation is outside the
// measured loop.
func BenchmarkEvaluate(b *testing.B) {
	pols := corpusPolicies(b, "pod-security", "best-practices")
	eng := eval.New(eval.Options{})
	for _, tt := range []struct {
		name       string
		obj        string
		background bool
	}{
		{"Pod", benchPod(b), false},
		{"Deployment", benchDeployment, false},
		{"PodBackground", benchPod(b), true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			req := &eval.Request{Object: object(b, tt.obj)}
			if tt.background {
				req.Mode = eval.Background
			}
			results := len(eng.Evaluate(context.Background(), pols, req).Results)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				eng.Evaluate(context.Background(), pols, req)
			}
			b.ReportMetric(float64(len(pols)), "policies")
			b.ReportMetric(float64(results), "results")
		})
	}
}
