package kyvernotest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewResource(t *testing.T) {
	tests := []struct {
		name          string
		give          map[string]any
		wantNamespace string
		wantDisplay   string
		wantObject    map[string]any
	}{
		{
			name:          "namespaced kind without namespace goes to default",
			give:          map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}},
			wantNamespace: "default",
			wantDisplay:   "v1/Pod/default/p",
			wantObject:    map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "default"}},
		},
		{
			name:          "cluster-scoped kind keeps no namespace",
			give:          map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "admin"}},
			wantNamespace: "",
			wantDisplay:   "rbac.authorization.k8s.io/v1/ClusterRole/admin",
			wantObject:    map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "admin"}},
		},
		{
			name:          "unknown kinds are namespaced",
			give:          map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "team"}},
			wantNamespace: "team",
			wantDisplay:   "example.com/v1/Widget/team/w",
			wantObject:    map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "team"}},
		},
		{
			name:          "null labels and annotations become empty maps",
			give:          map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n", "labels": nil, "annotations": nil, "other": nil}},
			wantNamespace: "",
			wantDisplay:   "v1/Namespace/n",
			wantObject:    map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n", "labels": map[string]any{}, "annotations": map[string]any{}, "other": nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResource("f.yaml", 1, tt.give)
			if r.Namespace != tt.wantNamespace || r.Display() != tt.wantDisplay {
				t.Errorf("newResource(%v) = namespace %q, display %q, want %q, %q", tt.give, r.Namespace, r.Display(), tt.wantNamespace, tt.wantDisplay)
			}
			if diff := cmp.Diff(tt.wantObject, r.Object); diff != "" {
				t.Errorf("newResource(%v) object mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestUniqueResources(t *testing.T) {
	pod := func(version, name string) *Resource {
		return newResource("f.yaml", 1, map[string]any{"apiVersion": version, "kind": "Pod", "metadata": map[string]any{"name": name}})
	}
	a, b, aAgain, aOtherVersion := pod("v1", "a"), pod("v1", "b"), pod("v1", "a"), pod("v2", "a")
	got := uniqueResources([]*Resource{a, b, aAgain, aOtherVersion})
	want := []*Resource{a, b}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uniqueResources() mismatch, first of a group, kind, namespace and name kept (-want +got):\n%s", diff)
	}
}
