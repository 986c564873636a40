package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitKindSelector(t *testing.T) {
	type gvks struct{ Group, Version, Kind, Subresource string }
	tests := []struct {
		give string
		want gvks
	}{
		{give: "Pod", want: gvks{"*", "*", "Pod", ""}},
		{give: "*", want: gvks{"*", "*", "*", ""}},
		{give: "v1/Pod", want: gvks{"*", "v1", "Pod", ""}},
		{give: "v2beta1/HorizontalPodAutoscaler", want: gvks{"*", "v2beta1", "HorizontalPodAutoscaler", ""}},
		{give: "*/Pod", want: gvks{"*", "*", "Pod", ""}},
		{give: "*/*", want: gvks{"*", "*", "*", "*"}},
		{give: "*/status", want: gvks{"*", "*", "*", "status"}},
		{give: "Pod/exec", want: gvks{"*", "*", "Pod", "exec"}},
		{give: "Pod.status", want: gvks{"*", "*", "Pod", "status"}},
		{give: "Pod/*", want: gvks{"*", "*", "Pod", "*"}},
		{give: "v1/Pod/status", want: gvks{"*", "v1", "Pod", "status"}},
		{give: "v1/Pod.eviction", want: gvks{"*", "v1", "Pod", "eviction"}},
		{give: "apps/v1/Deployment", want: gvks{"apps", "v1", "Deployment", ""}},
		{give: "apps/*/Deployment", want: gvks{"apps", "*", "Deployment", ""}},
		{give: "apps/*/*", want: gvks{"apps", "*", "*", ""}},
		{give: "networking.k8s.io/v1/NetworkPolicy", want: gvks{"networking.k8s.io", "v1", "NetworkPolicy", ""}},
		{give: "apps/v1/Deployment/scale", want: gvks{"apps", "v1", "Deployment", "scale"}},
		{give: "apps/v1/Deployment.scale", want: gvks{"apps", "v1", "Deployment", "scale"}},
		{give: "*/Node/status", want: gvks{"*", "*", "Node", "status"}},
		// Kyverno's version regexp takes one digit only: v10 is a group.
		{give: "v10/Foo/Bar", want: gvks{"v10", "Foo", "Bar", ""}},
		{give: "v1alpha1/Foo", want: gvks{"*", "v1alpha1", "Foo", ""}},
		{give: "a/b/c/d/e", want: gvks{"", "", "", ""}},
	}
	for _, tt := range tests {
		g, v, k, s := splitKindSelector(tt.give)
		if diff := cmp.Diff(tt.want, gvks{g, v, k, s}); diff != "" {
			t.Errorf("splitKindSelector(%q) mismatch (-want +got):\n%s", tt.give, diff)
		}
	}
}
