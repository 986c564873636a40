package generate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		give, wantAPIVersion, wantKind string
	}{
		{"Secret", "", "Secret"},
		{"v1/Secret", "v1", "Secret"},
		{"networking.k8s.io/v1/NetworkPolicy", "networking.k8s.io/v1", "NetworkPolicy"},
	}
	for _, tt := range tests {
		if a, k := KindOf(tt.give); a != tt.wantAPIVersion || k != tt.wantKind {
			t.Errorf("KindOf(%q) = %q, %q, want %q, %q", tt.give, a, k, tt.wantAPIVersion, tt.wantKind)
		}
	}
}

func TestParsePattern(t *testing.T) {
	got, err := ParsePattern(map[string]any{
		"apiVersion": "v1", "kind": "Secret", "namespace": "a", "name": "s",
		"clone": map[string]any{"namespace": "default", "name": "src"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &Pattern{
		Target: Target{APIVersion: "v1", Kind: "Secret", Namespace: "a", Name: "s"},
		Clone:  &Target{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "src"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParsePattern(clone) mismatch (-want +got):\n%s", diff)
	}
}

func TestParsePatternErrors(t *testing.T) {
	tests := []struct {
		name string
		give any
	}{
		{"not an object", "x"},
		{"name not a string", map[string]any{"name": 3.0}},
		{"clone name not a string", map[string]any{"clone": map[string]any{"name": true}}},
		{"cloneList kind not a string", map[string]any{"cloneList": map[string]any{"kinds": []any{1.0}}}},
	}
	for _, tt := range tests {
		if _, err := ParsePattern(tt.give); err == nil {
			t.Errorf("ParsePattern(%s) = nil error, want one", tt.name)
		}
	}
}

func TestUnchanged(t *testing.T) {
	desired := map[string]any{"kind": "ResourceQuota", "spec": map[string]any{"hard": map[string]any{"pods": "10"}}}
	tests := []struct {
		name     string
		existing map[string]any
		want     bool
	}{
		{"same", map[string]any{"kind": "ResourceQuota", "spec": map[string]any{"hard": map[string]any{"pods": "10"}}}, true},
		{"changed value", map[string]any{"kind": "ResourceQuota", "spec": map[string]any{"hard": map[string]any{"pods": "99"}}}, false},
		{"extra field", map[string]any{"kind": "ResourceQuota", "status": map[string]any{"used": "1"}, "spec": map[string]any{"hard": map[string]any{"pods": "10"}}}, false},
	}
	for _, tt := range tests {
		if got := Unchanged(desired, tt.existing); got != tt.want {
			t.Errorf("Unchanged(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOwnerLabels(t *testing.T) {
	o := Owner{Policy: "p", Rule: "r", Existing: true, Trigger: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "ns", "uid": "u"},
	}}
	want := map[string]string{
		LabelManagedBy: ManagedByKyverno, LabelPolicyName: "p", LabelPolicyNamespace: "", LabelRuleName: "r",
		LabelTriggerGroup: "apps", LabelTriggerVersion: "v1", LabelTriggerKind: "Deployment",
		LabelTriggerNS: "ns", LabelTriggerUID: "u", LabelBackgroundRule: "r",
	}
	if diff := cmp.Diff(want, o.Labels()); diff != "" {
		t.Errorf("Owner.Labels() mismatch (-want +got):\n%s", diff)
	}
}
