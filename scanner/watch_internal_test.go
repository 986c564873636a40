package scanner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func pod(mutate func(obj map[string]any)) map[string]any {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "10", "generation": int64(1),
			"labels":      map[string]any{"team": "web"},
			"annotations": map[string]any{"note": "a"},
		},
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.27"}}},
		"status": map[string]any{"phase": "Pending"},
	}
	if mutate != nil {
		mutate(obj)
	}
	return obj
}

func metaOf(obj map[string]any) map[string]any { return obj["metadata"].(map[string]any) }
func specOf(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func TestContentHash(t *testing.T) {
	base := contentHash(pod(nil))
	tests := []struct {
		name     string
		give     func(map[string]any)
		wantSame bool
	}{
		{"status only", func(o map[string]any) { o["status"] = map[string]any{"phase": "Running"} }, true},
		{"resourceVersion and generation", func(o map[string]any) { metaOf(o)["resourceVersion"] = "11"; metaOf(o)["generation"] = int64(2) }, true},
		{"managedFields", func(o map[string]any) { metaOf(o)["managedFields"] = []any{map[string]any{"manager": "kubectl"}} }, true},
		{"binding to a node", func(o map[string]any) { specOf(o)["nodeName"] = "node-1" }, true},
		{"a label", func(o map[string]any) { metaOf(o)["labels"] = map[string]any{"team": "api"} }, false},
		{"an annotation", func(o map[string]any) { metaOf(o)["annotations"] = map[string]any{"note": "b"} }, false},
		{"the spec", func(o map[string]any) {
			specOf(o)["containers"] = []any{map[string]any{"name": "c", "image": "nginx:latest"}}
		}, false},
		{"another top-level field", func(o map[string]any) { o["data"] = map[string]any{"k": "v"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := pod(tt.give)
			if got := contentHash(obj) == base; got != tt.wantSame {
				t.Errorf("contentHash(Pod with %s changed) == contentHash(Pod) is %v, want %v", tt.name, got, tt.wantSame)
			}
		})
	}
	// The spec of the object is not changed by hashing it.
	obj := pod(func(o map[string]any) { specOf(o)["nodeName"] = "node-1" })
	contentHash(obj)
	if diff := cmp.Diff("node-1", specOf(obj)["nodeName"]); diff != "" {
		t.Errorf("contentHash changed spec.nodeName (-want +got):\n%s", diff)
	}
}

func TestWatchOptionsDefaults(t *testing.T) {
	got := WatchOptions{}.withDefaults()
	want := WatchOptions{Delay: time.Second, MaxBatch: 1000, PolicyPoll: 30 * time.Second, SyncTimeout: 2 * time.Minute, StopGrace: 10 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WatchOptions{}.withDefaults() mismatch (-want +got):\n%s", diff)
	}
	set := WatchOptions{Delay: time.Millisecond, MaxBatch: 3, Interval: time.Hour, PolicyPoll: time.Second, SyncTimeout: time.Second, StopGrace: time.Second}
	if diff := cmp.Diff(set, set.withDefaults()); diff != "" {
		t.Errorf("withDefaults changed options that were set (-want +got):\n%s", diff)
	}
}
