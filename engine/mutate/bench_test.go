package mutate

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
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

// BenchmarkAdmission is what the engine's mutate phase does for the Pod of
// the engine's benchmarks (engine/testdata/bench/pod.yaml) and the
// corpus policy add-safe-to-evict: its emptyDir rule (the global anchor
// does not hold), its hostPath rule (adds the annotation), as Overlays
// (the rules have no variables), then the JSON Patch of the admission
// response. The sub-benchmarks time each step.
func BenchmarkAdmission(b *testing.B) {
	raw, err := os.ReadFile("../testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var pod map[string]any
	if err := yaml.Unmarshal(raw, &pod); err != nil {
		b.Fatal(err)
	}
	annotation := func() map[string]any {
		return map[string]any{"annotations": map[string]any{"+(cluster-autoscaler.kubernetes.io/safe-to-evict)": "true"}}
	}
	emptyDir := map[string]any{"metadata": annotation(), "spec": map[string]any{"volumes": []any{map[string]any{"<(emptyDir)": map[string]any{}}}}}
	hostPath := map[string]any{"metadata": annotation(), "spec": map[string]any{"volumes": []any{map[string]any{"hostPath": map[string]any{"<(path)": "*"}}}}}
	emptyDirOverlay, err := NewOverlay(emptyDir)
	if err != nil {
		b.Fatal(err)
	}
	hostPathOverlay, err := NewOverlay(hostPath)
	if err != nil {
		b.Fatal(err)
	}
	admit := func() ([]byte, error) {
		obj, err := emptyDirOverlay.Apply(pod)
		if err != nil {
			return nil, err
		}
		obj, err = hostPathOverlay.Apply(obj)
		if err != nil {
			return nil, err
		}
		if Equal(pod, obj) {
			return nil, nil
		}
		return MarshalPatch(Diff(pod, obj))
	}
	patch, err := admit()
	if err != nil {
		b.Fatal(err)
	}
	const want = `[{"op":"add","path":"/metadata/annotations","value":{"cluster-autoscaler.kubernetes.io/safe-to-evict":"true"}}]`
	if string(patch) != want {
		b.Fatalf("admit() = %s, want %s", patch, want)
	}
	patched, _ := StrategicMerge(pod, hostPath)
	ops := Diff(pod, patched)
	for _, bb := range []struct {
		name string
		f    func() error
	}{
		{"all", func() error { _, err := admit(); return err }},
		{"emptyDir", func() error { _, err := StrategicMerge(pod, emptyDir); return err }},
		{"hostPath", func() error { _, err := StrategicMerge(pod, hostPath); return err }},
		{"emptyDirOverlay", func() error { _, err := emptyDirOverlay.Apply(pod); return err }},
		{"hostPathOverlay", func() error { _, err := hostPathOverlay.Apply(pod); return err }},
		{"Equal", func() error { Equal(pod, patched); return nil }},
		{"Diff", func() error { Diff(pod, patched); return nil }},
		{"MarshalPatch", func() error { _, err := MarshalPatch(ops); return err }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bb.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
