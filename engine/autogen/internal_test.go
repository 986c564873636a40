package autogen

import "testing"

func TestShiftReferences(t *testing.T) {
	tests := []struct {
		name      string
		giveValue string
		giveShift string
		givePivot string
		want      string
	}{
		{name: "no reference", giveValue: "plain message", giveShift: "spec/template", givePivot: "pattern", want: "plain message"},
		{name: "pivot found", giveValue: "got $(pattern/spec/x)", giveShift: "spec/template", givePivot: "pattern", want: "got $(pattern/spec/template/spec/x)"},
		{name: "at start", giveValue: "$(pattern/spec/x) is wrong", giveShift: "spec/template", givePivot: "pattern", want: "$(pattern/spec/template/spec/x) is wrong"},
		{name: "pivot missing", giveValue: "got $(./spec/x)", giveShift: "spec/template", givePivot: "pattern", want: "got $(./spec/x)"},
		{name: "escaped", giveValue: `got \$(pattern/spec/x)`, giveShift: "spec/template", givePivot: "pattern", want: `got \$(pattern/spec/x)`},
		{name: "every reference", giveValue: "a $(pattern/x) b $(pattern/y)", giveShift: "s", givePivot: "pattern", want: "a $(pattern/s/x) b $(pattern/s/y)"},
		{name: "anyPattern index", giveValue: "a $(anyPattern/1/spec/x)", giveShift: "spec/template", givePivot: "anyPattern", want: "a $(anyPattern/1/spec/template/spec/x)"},
		// Kyverno keeps the pivot it extended with the first index.
		{name: "anyPattern pivot carries over", giveValue: "a $(anyPattern/0/x) b $(anyPattern/1/y)", giveShift: "s", givePivot: "anyPattern", want: "a $(anyPattern/0/s/x) b $(anyPattern/1/y)"},
		// Kyverno panics here; the reference is left alone.
		{name: "anyPattern short reference", giveValue: "a $(x)", giveShift: "s", givePivot: "anyPattern", want: "a $(x)"},
		// Kyverno turns the byte before "$(" into a rune, breaking UTF-8.
		{name: "multi-byte character before", giveValue: "é$(pattern/x)", giveShift: "s", givePivot: "pattern", want: "\u00c3\xa9$(pattern/s/x)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shiftReferences(tt.giveValue, tt.giveShift, tt.givePivot); got != tt.want {
				t.Errorf("shiftReferences(%q, %q, %q) = %q, want %q", tt.giveValue, tt.giveShift, tt.givePivot, got, tt.want)
			}
		})
	}
}

func TestContainsKind(t *testing.T) {
	tests := []struct {
		give []string
		want bool
	}{
		{give: []string{"Pod"}, want: true},
		{give: []string{"v1/Pod"}, want: true},
		{give: []string{"*/Pod"}, want: true},
		{give: []string{"v1beta1/Pod"}, want: true},
		{give: []string{"core/v1/Pod"}, want: true},
		{give: []string{"Pod/exec"}, want: true},
		{give: []string{"Pod.exec"}, want: true},
		{give: []string{"v1/Pod/exec"}, want: true},
		{give: []string{"v1/Pod.status"}, want: true},
		{give: []string{"apps/v1/Deployment", "Pod"}, want: true},
		{give: []string{"Pods"}, want: false},
		{give: []string{"x/y/Pod/z/w"}, want: false},
		{give: nil, want: false},
	}
	for _, tt := range tests {
		if got := containsKind(tt.give, "Pod"); got != tt.want {
			t.Errorf("containsKind(%q, Pod) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
