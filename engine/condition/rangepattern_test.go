package condition

import (
	"testing"

	"github.com/verdict-policy/verdict/engine/internal/operator"
)

func TestIsRange(t *testing.T) {
	tests := []struct {
		name string
		give string
		want bool
	}{
		{name: "integers", give: "0-1", want: true},
		{name: "quantities", give: "0Mi-1024Mi", want: true},
		{name: "negative bounds", give: "-10--8", want: true},
		{name: "signed upper bound", give: "-10-+8", want: true},
		{name: "decimals", give: "1.001-10", want: true},
		{name: "pipe is accepted as a sign", give: "|1-5", want: true},
		{name: "exponent-looking value is a range", give: "1e-5", want: true},
		{name: "not in range", give: "0!-1", want: false},
		{name: "text prefix", give: "text1024Mi-2048Mi", want: false},
		{name: "words", give: "test-value", want: false},
		{name: "wildcard", give: "value-*", want: false},
		{name: "single number", give: "5", want: false},
		{name: "empty", give: "", want: false},
		{name: "IP address", give: "1.1.1.1", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isRange(tt.give); got != tt.want {
				t.Errorf("isRange(%q) = %v, want %v", tt.give, got, tt.want)
			}
		})
	}
}

func TestPatternOperator(t *testing.T) {
	tests := []struct {
		name string
		give string
		want operator.Op
	}{
		{name: "one character", give: "f", want: operator.Equal},
		{name: "empty", give: "", want: operator.Equal},
		{name: "more or equal", give: ">=", want: operator.MoreEqual},
		{name: "less or equal", give: "<=1", want: operator.LessEqual},
		{name: "more", give: ">1", want: operator.More},
		{name: "less", give: "<1", want: operator.Less},
		{name: "not", give: "!a", want: operator.NotEqual},
		{name: "range", give: "1-2", want: operator.InRange},
		{name: "not in range", give: "0Mi!-1024Mi", want: operator.NotInRange},
		{name: "negative not in range", give: "-10!--8", want: operator.NotInRange},
		{name: "rewritten negative range reads as not-equal", give: "!-3-5", want: operator.NotEqual},
		{name: "plain", give: "abc", want: operator.Equal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := operator.Of(tt.give); got != tt.want {
				t.Errorf("operator.Of(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestMatchStringPattern(t *testing.T) {
	tests := []struct {
		name        string
		giveValue   string
		givePattern string
		want        bool
	}{
		{name: "identical", giveValue: "1-10", givePattern: "1-10", want: true},
		{name: "in range", giveValue: "5", givePattern: "1-10", want: true},
		{name: "lower bound", giveValue: "1", givePattern: "1-10", want: true},
		{name: "below", giveValue: "0", givePattern: "1-10", want: false},
		{name: "decimal in range", giveValue: "1.002", givePattern: "1.001-10", want: true},
		{name: "quantity in range", giveValue: "512Mi", givePattern: "0Mi-1Gi", want: true},
		{name: "quantity out of range", giveValue: "2Gi", givePattern: "0Mi-1Gi", want: false},
		{name: "not in range", giveValue: "11", givePattern: "1!-10", want: true},
		{name: "not in range, inside", giveValue: "5", givePattern: "1!-10", want: false},
		{name: "negative range", giveValue: "-9", givePattern: "-10--8", want: true},
		{name: "durations compare as durations", giveValue: "90s", givePattern: ">1m", want: true},
		{name: "duration value vs number bound is a quantity comparison that fails", giveValue: "90s", givePattern: ">1", want: false},
		{name: "alternatives", giveValue: "5", givePattern: "<1 | >4", want: true},
		{name: "conjuncts", giveValue: "5", givePattern: ">1 & <4", want: false},
		{name: "empty alternative matches only empty", giveValue: "", givePattern: "|1-5", want: true},
		{name: "pipe-prefixed range", giveValue: "3", givePattern: "|1-5", want: true},
		{name: "not-equal wildcard", giveValue: "4", givePattern: "!-3-5", want: true},
		{name: "equal wildcard", giveValue: "abc", givePattern: "a*", want: true},
		{name: "ordering on text is false", giveValue: "b", givePattern: ">a", want: false},
		{name: "non-number in range", giveValue: "abc", givePattern: "1-10", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchStringPattern(tt.giveValue, tt.givePattern); got != tt.want {
				t.Errorf("matchStringPattern(%q, %q) = %v, want %v", tt.giveValue, tt.givePattern, got, tt.want)
			}
		})
	}
}
