package mutate

import (
	"testing"
)

// BenchmarkStrategicMerge applies the two overlays of add-safe-to-evict
// (an add anchor on an annotation, and a global anchor on a list) to a Pod
// with a hostPath volume: the emptyDir overlay's anchor does not hold, the
// hostPath one adds the annotation.
func BenchmarkStrategicMerge(b *testing.B) {
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "web", "image": "ghcr.io/shop/web:1.4.2", "ports": []any{map[string]any{"containerPort": 8080.0}}},
				map[string]any{"name": "proxy", "image": "envoyproxy/envoy:v1.30.1"},
			},
			"volumes": []any{map[string]any{"name": "data", "hostPath": map[string]any{"path": "/var/data"}}},
		},
	}
	annotation := map[string]any{"annotations": map[string]any{"+(cluster-autoscaler.kubernetes.io/safe-to-evict)": "true"}}
	for _, tt := range []struct {
		name  string
		patch any
	}{
		{"emptyDir", map[string]any{"metadata": annotation, "spec": map[string]any{"volumes": []any{map[string]any{"<(emptyDir)": map[string]any{}}}}}},
		{"hostPath", map[string]any{"metadata": annotation, "spec": map[string]any{"volumes": []any{map[string]any{"hostPath": map[string]any{"<(path)": "*"}}}}}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := StrategicMerge(pod, tt.patch); err != nil {
					b.Fatal(err)
				}
			}
		})
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
