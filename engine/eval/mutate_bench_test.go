package eval_test

import (
	"context"
	"testing"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
)

// compileInline compiles policy documents written in the benchmark.
func compileInline(tb testing.TB, src string) []*policy.Policy {
	tb.Helper()
	docs, err := kyverno.DecodePolicies("bench", []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	var out []*policy.Policy
	for _, d := range docs {
		p, err := policy.Compile(d)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// A typical mutation: default labels and the safe-to-evict annotation of
// a Pod with an emptyDir (best-practices/add-safe-to-evict).
const benchMutatePolicies = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-labels}
spec:
  rules:
  - name: add-labels
    match: {any: [{resources: {kinds: [Pod]}}]}
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            +(app.kubernetes.io/managed-by): verdict
            +(team): "{{ request.namespace }}"
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-safe-to-evict}
spec:
  rules:
  - name: annotate-empty-dir
    match: {any: [{resources: {kinds: [Pod]}}]}
    mutate:
      patchStrategicMerge:
        metadata:
          annotations:
            +(cluster-autoscaler.kubernetes.io/safe-to-evict): "true"
        spec:
          volumes:
          - <(emptyDir): {}
`

const benchMutatePod = `
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  labels: {app.kubernetes.io/name: web}
spec:
  containers:
  - name: web
    image: ghcr.io/shop/web:1.4.2
    ports: [{containerPort: 8080, protocol: TCP}]
    volumeMounts: [{name: cache, mountPath: /cache}]
  - name: proxy
    image: envoyproxy/envoy:v1.30.1
  volumes:
  - name: cache
    emptyDir: {}
`

// BenchmarkMutate measures one admission of a Pod through two mutate
// policies: the patched object and its JSON Patch.
func BenchmarkMutate(b *testing.B) {
	pols := compileInline(b, benchMutatePolicies)
	pod := object(b, benchMutatePod)
	eng := eval.New(eval.Options{})
	ctx := context.Background()
	req := &eval.Request{Object: pod}
	if resp := eng.Evaluate(ctx, pols, req); len(resp.Patch) == 0 {
		b.Fatalf("Evaluate() = %+v, want a patch", resp.Results)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		eng.Evaluate(ctx, pols, req)
	}
}

// A typical generation: a default-deny NetworkPolicy per Namespace
// (best-practices/add-network-policy).
const benchGeneratePolicy = `
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-networkpolicy}
spec:
  rules:
  - name: default-deny
    match: {any: [{resources: {kinds: [Namespace]}}]}
    generate:
      apiVersion: networking.k8s.io/v1
      kind: NetworkPolicy
      name: default-deny
      namespace: "{{ request.object.metadata.name }}"
      synchronize: true
      data:
        spec:
          podSelector: {}
          policyTypes: [Ingress, Egress]
`

// BenchmarkGenerate measures one admission of a Namespace that generates
// a NetworkPolicy (the Lookup has no cluster: the resource is created).
func BenchmarkGenerate(b *testing.B) {
	pols := compileInline(b, benchGeneratePolicy)
	ns := object(b, "{apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {team: a}}}")
	eng := eval.New(eval.Options{})
	ctx := context.Background()
	req := &eval.Request{Object: ns}
	if resp := eng.Evaluate(ctx, pols, req); len(resp.Generated) != 1 {
		b.Fatalf("Evaluate() generated %d resources, want 1", len(resp.Generated))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		eng.Evaluate(ctx, pols, req)
	}
}
