package kyverno_test

import (
	"testing"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

func TestAPIGroup(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"apps/v1", "apps"},
		{"v1", ""},
		{"", ""},
		{"policies.kyverno.io/v1beta1", "policies.kyverno.io"},
		{"a/b/c", "a"},
	}
	for _, tt := range tests {
		if got := kyverno.APIGroup(tt.give); got != tt.want {
			t.Errorf("APIGroup(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestIsKindVersion(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{give: "*", want: true},
		{give: "v1", want: true},
		{give: "v2", want: true},
		{give: "v1beta1", want: true},
		{give: "v2beta1", want: true},
		{give: "v1alpha2", want: true},
		{give: "v2alpha3", want: true},
		{give: "v10", want: false},
		{give: "v1beta", want: false},
		{give: "v1gamma1", want: false},
		{give: "v1beta12", want: false},
		{give: "apps", want: false},
		{give: "v", want: false},
		{give: "", want: false},
	}
	for _, tt := range tests {
		if got := kyverno.IsKindVersion(tt.give); got != tt.want {
			t.Errorf("IsKindVersion(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
