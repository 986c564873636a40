package mutate

import (
	"testing"
)

// BenchmarkStrategicMerge applies the safe-to-evict overlay (an add anchor
// and a global anchor on a list) to a Pod.
func BenchmarkStrategicMerge(b *testing.B) {
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "web", "image": "ghcr.io/shop/web:1.4.2", "ports": []any{map[string]any{"containerPort": 8080.0, "protocol": "TCP"}}},
				map[string]any{"name": "proxy", "image": "envoyproxy/envoy:v1.30.1"},
			},
			"volumes": []any{map[string]any{"name": "cache", "emptyDir": map[string]any{}}},
		},
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"+(cluster-autoscaler.kubernetes.io/safe-to-evict)": "true"}},
		"spec":     map[string]any{"volumes": []any{map[string]any{"<(emptyDir)": map[string]any{}}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrategicMerge(pod, patch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiff computes the JSON Patch of a small mutation of a Pod.
func BenchmarkDiff(b *testing.B) {
	a := map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "web"}}}}
	c := map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web", "team": "shop"}}, "spec": a["spec"]}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalPatch(Diff(a, c)); err != nil {
			b.Fatal(err)
		}
	}
}
