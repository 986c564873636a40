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
