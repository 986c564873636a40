package eval_test

import (
	"context"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
)

// corpusPolicies compiles the ClusterPolicies of the given folders of the
// kyverno/policies corpus, skipping the benchmark when the corpus is
// absent.
func corpusPolicies(tb testing.TB, folders ...string) []*policy.Policy {
	tb.Helper()
	var out []*policy.Policy
	for _, f := range folders {
		dir, ok := testcorpus.Corpus(f)
		if !ok {
			tb.Skipf("corpus not present at %s", dir)
		}
		files, err := testcorpus.ClusterPolicies(dir)
		if err != nil {
			tb.Fatal(err)
		}
		for _, file := range files {
			docs, err := kyverno.DecodePolicies(file.Path, file.Data)
			if err != nil {
				tb.Fatalf("DecodePolicies(%s) = %v", file.Path, err)
			}
			for _, doc := range docs {
				p, err := policy.Compile(doc)
				if err != nil {
					tb.Fatalf("Compile(%s) = %v", file.Path, err)
				}
				out = append(out, p)
			}
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
