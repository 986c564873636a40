package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine/pattern"
)

// The shared outcomes are the ones a pattern rule would make itself, on
// first and later uses alike.
func TestSharedPatternOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		giveRule    string
		giveMessage string
		givePath    string
	}{
		{name: "no message", giveRule: "check-rootfs", givePath: "/spec/containers/0/securityContext/"},
		{name: "message with dot", giveRule: "check-rootfs", giveMessage: "Root filesystem must be read-only.", givePath: "/spec/containers/0/securityContext/"},
		{name: "message without dot", giveRule: "check-rootfs", giveMessage: "Root filesystem must be read-only", givePath: "/spec/containers/1/securityContext/"},
		{name: "other rule", giveRule: "autogen-check-rootfs", giveMessage: "Root filesystem must be read-only", givePath: "/spec/template/spec/containers/0/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := outcome{status: StatusFail, message: pattern.Result{Status: pattern.Fail, Path: tt.givePath}.RuleMessage(tt.giveRule, tt.giveMessage)}
			for i := range 2 {
				got := failOutcome(tt.giveRule, tt.giveMessage, tt.givePath)
				if diff := cmp.Diff(want, *got, cmp.AllowUnexported(outcome{})); diff != "" {
					t.Errorf("failOutcome(%q, %q, %q) use %d mismatch (-want +got):\n%s", tt.giveRule, tt.giveMessage, tt.givePath, i, diff)
				}
			}
		})
	}
	for _, index := range []int{0, 1, 12} {
		want := outcome{status: StatusPass, message: pattern.AnyResult{Status: pattern.Pass, Index: index}.RuleMessage("r", "ignored")}
		for i := range 2 {
			if diff := cmp.Diff(want, *anyPassOutcome("r", index), cmp.AllowUnexported(outcome{})); diff != "" {
				t.Errorf("anyPassOutcome(r, %d) use %d mismatch (-want +got):\n%s", index, i, diff)
			}
		}
	}
}
