package kubelookup

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
)

// TestCELResources: resource.Get and resource.List of ValidatingPolicies
// read the cluster through the dynamic client; a missing object is
// engine.ErrNotFound; resource.Post is refused.
func TestCELResources(t *testing.T) {
	l, _, _ := newTestLookup(t, &clock{}, nil,
		obj("example.com/v1", "Setting", "shop", "a", map[string]string{"tier": "gold"}),
		obj("example.com/v1", "Setting", "shop", "b", map[string]string{"tier": "silver"}),
		obj("example.com/v1", "Setting", "dev", "c", map[string]string{"tier": "gold"}),
		obj("example.com/v1", "ClusterSetting", "", "global", nil))
	src := l.CELSources().Resources
	ctx := t.Context()

	got, err := src.GetResource(ctx, "example.com/v1", "settings", "shop", "a")
	if err != nil || got["metadata"].(map[string]any)["name"] != "a" {
		t.Errorf("GetResource(settings shop/a) = %v, %v; want the object", got, err)
	}
	got, err = src.GetResource(ctx, "example.com/v1", "clustersettings", "", "global")
	if err != nil || got["metadata"].(map[string]any)["name"] != "global" {
		t.Errorf("GetResource(clustersettings global) = %v, %v; want the object", got, err)
	}
	if _, err := src.GetResource(ctx, "example.com/v1", "settings", "shop", "missing"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetResource(settings shop/missing) = %v, want engine.ErrNotFound", err)
	}
	if _, err := src.GetResource(ctx, "a/b/c", "settings", "shop", "a"); err == nil {
		t.Errorf("GetResource(apiVersion a/b/c) = nil error, want an error")
	}

	tests := []struct {
		namespace string
		labels    map[string]string
		want      []string
	}{
		{"shop", nil, []string{"a", "b"}},
		{"shop", map[string]string{"tier": "gold"}, []string{"a"}},
		{"", map[string]string{"tier": "gold"}, []string{"a", "c"}},
	}
	for _, tt := range tests {
		list, err := src.ListResources(ctx, "example.com/v1", "settings", tt.namespace, tt.labels)
		if err != nil {
			t.Fatalf("ListResources(settings, %q, %v): %v", tt.namespace, tt.labels, err)
		}
		var names []string
		for _, it := range list["items"].([]any) {
			names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		slices.Sort(names)
		if diff := cmp.Diff(tt.want, names); diff != "" {
			t.Errorf("ListResources(settings, %q, %v) names (-want +got):\n%s", tt.namespace, tt.labels, diff)
		}
	}

	if _, err := src.PostResource(ctx, "v1", "configmaps", "shop", map[string]any{}); err == nil {
		t.Errorf("PostResource = nil error, want the server's refusal")
	}
}

// TestCELResourcesListLimit: a list of more than MaxListObjects objects
// is an error, at the limit it is not.
func TestCELResourcesListLimit(t *testing.T) {
	l, _, _ := newTestLookup(t, &clock{}, nil,
		obj("example.com/v1", "Setting", "shop", "a", nil),
		obj("example.com/v1", "Setting", "shop", "b", nil))
	src := l.CELSources().Resources
	for _, tt := range []struct {
		max     int
		wantErr bool
	}{{2, false}, {1, true}} {
		l.opts.MaxListObjects = tt.max
		_, err := src.ListResources(t.Context(), "example.com/v1", "settings", "shop", nil)
		if (err != nil) != tt.wantErr {
			t.Errorf("ListResources(2 objects, MaxListObjects %d) = %v, want error %v", tt.max, err, tt.wantErr)
		}
	}
}
