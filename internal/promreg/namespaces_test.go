package promreg

import "testing"

func TestNamespacesCounted(t *testing.T) {
	tests := []struct {
		name string
		n    Namespaces
		ns   string
		want bool
	}{
		{"all", Namespaces{}, "a", true},
		{"cluster-scoped", Namespaces{Include: []string{"a"}, Exclude: []string{""}}, "", true},
		{"included", Namespaces{Include: []string{"a", "b"}}, "b", true},
		{"not included", Namespaces{Include: []string{"a", "b"}}, "c", false},
		{"excluded", Namespaces{Exclude: []string{"a"}}, "a", false},
		{"not excluded", Namespaces{Exclude: []string{"a"}}, "b", true},
		{"exclude wins", Namespaces{Include: []string{"a"}, Exclude: []string{"a"}}, "a", false},
	}
	for _, tt := range tests {
		if got := tt.n.Counted(tt.ns); got != tt.want {
			t.Errorf("%s: %+v.Counted(%q) = %v, want %v", tt.name, tt.n, tt.ns, got, tt.want)
		}
	}
}
