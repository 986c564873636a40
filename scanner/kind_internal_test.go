package scanner

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestResourceSelector: a selector of a ValidatingPolicy's resourceRules
// selects by group and plural resource, in files (the resource guessed
// from the kind) and in the cluster's API resources.
func TestResourceSelector(t *testing.T) {
	pods := Kind{Group: "", Version: "v1", Resource: "pods"}
	deployments := Kind{Group: "apps", Version: "v1", Resource: "deployments"}
	every := Kind{Group: "*", Version: "*", Resource: "*"}
	tests := []struct {
		k                Kind
		apiVersion, kind string
		resource         string
		want             bool
	}{
		{pods, "v1", "Pod", "pods", true},
		{pods, "v1", "ConfigMap", "configmaps", false},
		{pods, "example.com/v1", "Pod", "pods", false},
		{deployments, "apps/v1", "Deployment", "deployments", true},
		{deployments, "v1", "Deployment", "deployments", false},
		{every, "v1", "Pod", "pods", true},
	}
	for _, tt := range tests {
		if got := tt.k.Matches(tt.apiVersion, tt.kind); got != tt.want {
			t.Errorf("%s.Matches(%s, %s) = %v, want %v", tt.k, tt.apiVersion, tt.kind, got, tt.want)
		}
		gv, _ := schema.ParseGroupVersion(tt.apiVersion)
		// A cluster scan cannot list every resource: "*" selects none.
		want := tt.want && tt.k.Resource != "*"
		if got := tt.k.selects(gv, tt.resource, tt.kind); got != want {
			t.Errorf("%s.selects(%s, %s) = %v, want %v", tt.k, gv, tt.resource, got, want)
		}
	}
}
