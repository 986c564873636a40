package match

import "testing"

func TestHasVariable(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{give: "{{request.object.metadata.name}}", want: true},
		{give: "prefix-{{ x }}-suffix", want: true},
		{give: "{{}}", want: true},
		{give: "{{{a}}", want: true},
		{give: "{{a}", want: false},
		{give: "{a}}", want: false},
		{give: "{{a{b}}", want: false},
		{give: "plain", want: false},
		{give: "", want: false},
	}
	for _, tt := range tests {
		if got := hasVariable(tt.give); got != tt.want {
			t.Errorf("hasVariable(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
