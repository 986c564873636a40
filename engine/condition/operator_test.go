package condition

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine"
)

func TestParseOperator(t *testing.T) {
	tests := []struct {
		name string
		give string
		want Operator
	}{
		{name: "Equals", give: "Equals", want: Equals},
		{name: "legacy Equal", give: "Equal", want: Equals},
		{name: "NotEquals", give: "NotEquals", want: NotEquals},
		{name: "legacy NotEqual", give: "NotEqual", want: NotEquals},
		{name: "deprecated In", give: "In", want: In},
		{name: "deprecated NotIn", give: "NotIn", want: NotIn},
		{name: "AnyIn", give: "AnyIn", want: AnyIn},
		{name: "AllIn", give: "AllIn", want: AllIn},
		{name: "AnyNotIn", give: "AnyNotIn", want: AnyNotIn},
		{name: "AllNotIn", give: "AllNotIn", want: AllNotIn},
		{name: "GreaterThan", give: "GreaterThan", want: GreaterThan},
		{name: "GreaterThanOrEquals", give: "GreaterThanOrEquals", want: GreaterThanOrEquals},
		{name: "LessThan", give: "LessThan", want: LessThan},
		{name: "LessThanOrEquals", give: "LessThanOrEquals", want: LessThanOrEquals},
		{name: "DurationGreaterThan", give: "DurationGreaterThan", want: DurationGreaterThan},
		{name: "DurationGreaterThanOrEquals", give: "DurationGreaterThanOrEquals", want: DurationGreaterThanOrEquals},
		{name: "DurationLessThan", give: "DurationLessThan", want: DurationLessThan},
		{name: "DurationLessThanOrEquals", give: "DurationLessThanOrEquals", want: DurationLessThanOrEquals},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOperator(tt.give)
			if err != nil {
				t.Fatalf("ParseOperator(%q) error = %v, want nil", tt.give, err)
			}
			if got != tt.want {
				t.Errorf("ParseOperator(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestParseOperatorError(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{name: "empty", give: ""},
		{name: "unknown", give: "Contains"},
		{name: "lower case is rejected like Kyverno's policy validation", give: "equals"},
		{name: "upper case", give: "ANYIN"},
		{name: "surrounding space", give: " Equals"},
		{name: "symbol", give: "=="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOperator(tt.give)
			var got *engine.Error
			if !errors.As(err, &got) {
				t.Fatalf("ParseOperator(%q) error = %v, want *engine.Error", tt.give, err)
			}
			if got.Code != engine.CodeInvalidPolicy || got.Path != "" {
				t.Errorf("ParseOperator(%q) error code, path = %q, %q, want %q, %q", tt.give, got.Code, got.Path, engine.CodeInvalidPolicy, "")
			}
		})
	}
}

func TestOperatorReplacements(t *testing.T) {
	tests := []struct {
		name string
		give Operator
		want []Operator
	}{
		{name: "In", give: In, want: []Operator{AllIn, AnyIn}},
		{name: "NotIn", give: NotIn, want: []Operator{AllNotIn, AnyNotIn}},
		{name: "AnyIn is not deprecated", give: AnyIn, want: nil},
		{name: "Equals is not deprecated", give: Equals, want: nil},
		{name: "Duration operators only log in Kyverno", give: DurationGreaterThan, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.give.Replacements()); diff != "" {
				t.Errorf("%s.Replacements() mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}
