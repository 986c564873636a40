package quantity

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestCmpQuantity checks Parse and Cmp against
// resource.ParseQuantity and Quantity.Cmp where those are fast enough to
// call.
func TestCmpQuantity(t *testing.T) {
	tests := []struct {
		name  string
		giveA string
		giveB string
	}{
		{name: "binary vs decimal", giveA: "1Gi", giveB: "1000Mi"},
		{name: "equal", giveA: "1Ki", giveB: "1024"},
		{name: "milli", giveA: "500m", giveB: "0.5"},
		{name: "negative", giveA: "-1", giveB: "1"},
		{name: "both negative", giveA: "-2k", giveB: "-1e3"},
		{name: "zero vs negative zero", giveA: "0", giveB: "-0"},
		{name: "far apart", giveA: "1e1500", giveB: "1"},
		{name: "far apart negative", giveA: "-1e1500", giveB: "-1"},
		{name: "far apart, tiny", giveA: "1e-1500", giveB: "1n"},
		{name: "below resolution rounds up to 1n", giveA: "1e-20", giveB: "1n"},
		{name: "negative below resolution", giveA: "-1e-20", giveB: "-2n"},
		{name: "zero mantissa", giveA: "0e-1500", giveB: "0"},
		{name: "close exponents", giveA: "123e1500", giveB: "1.23e1502"},
		{name: "long mantissa", giveA: "100000000000000000000000000000", giveB: "1e29"},
		{name: "exponent wraps to 32 bits", giveA: "1e4294967286", giveB: "1n"},
		{name: "far apart, both huge", giveA: "1e2500", giveB: "1e1200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, errA := Parse(tt.giveA)
			b, errB := Parse(tt.giveB)
			if errA != nil || errB != nil {
				t.Fatalf("Parse(%q), Parse(%q) errors = %v, %v", tt.giveA, tt.giveB, errA, errB)
			}
			ra, rb := resource.MustParse(tt.giveA), resource.MustParse(tt.giveB)
			if got, want := Cmp(a, b), ra.Cmp(rb); got != want {
				t.Errorf("Cmp(%q, %q) = %d, want %d", tt.giveA, tt.giveB, got, want)
			}
			if got, want := Cmp(b, a), rb.Cmp(ra); got != want {
				t.Errorf("Cmp(%q, %q) = %d, want %d", tt.giveB, tt.giveA, got, want)
			}
		})
	}
}

// TestCmpQuantityHuge pins results for exponents that would make
// resource.ParseQuantity or Quantity.Cmp run for minutes; the test times out
// if the guards stop working.
func TestCmpQuantityHuge(t *testing.T) {
	tests := []struct {
		name  string
		giveA string
		giveB string
		want  int
	}{
		{name: "huge vs one", giveA: "1e2147483647", giveB: "1", want: 1},
		{name: "huge negative vs one", giveA: "-1e2147483647", giveB: "1", want: -1},
		{name: "huge vs huge", giveA: "1e2147483647", giveB: "10e2147483646", want: 0},
		{name: "huge vs smaller huge", giveA: "1e2147483647", giveB: "1e2000000000", want: 1},
		{name: "tiny rounds to 1n", giveA: "1e-2147483648", giveB: "1n", want: 0},
		{name: "negative tiny rounds to -1n", giveA: "-5.5e-2000000000", giveB: "-1n", want: 0},
		{name: "tiny zero", giveA: "0.0e-2000000000", giveB: "0", want: 0},
		{name: "tiny vs huge", giveA: "1e-2000000000", giveB: "1e2000000000", want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, errA := Parse(tt.giveA)
			b, errB := Parse(tt.giveB)
			if errA != nil || errB != nil {
				t.Fatalf("Parse(%q), Parse(%q) errors = %v, %v", tt.giveA, tt.giveB, errA, errB)
			}
			if got := Cmp(a, b); got != tt.want {
				t.Errorf("Cmp(%q, %q) = %d, want %d", tt.giveA, tt.giveB, got, tt.want)
			}
		})
	}
}

func TestQuantityExponent(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantI   int
		wantExp int32
		wantOK  bool
	}{
		{name: "plain exponent", give: "1e5", wantI: 1, wantExp: 5, wantOK: true},
		{name: "signed with fraction", give: "-1.5E-12", wantI: 4, wantExp: -12, wantOK: true},
		{name: "explicit plus", give: "2e+3", wantI: 1, wantExp: 3, wantOK: true},
		{name: "wraps to 32 bits", give: "1e4294967286", wantI: 1, wantExp: -10, wantOK: true},
		{name: "SI suffix", give: "1Ei", wantOK: false},
		{name: "bare e", give: "1e", wantOK: false},
		{name: "no number", give: "abc", wantOK: false},
		{name: "empty", give: "", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, exp, ok := quantityExponent(tt.give)
			if ok != tt.wantOK || (ok && (i != tt.wantI || exp != tt.wantExp)) {
				t.Errorf("quantityExponent(%q) = %d, %d, %v, want %d, %d, %v", tt.give, i, exp, ok, tt.wantI, tt.wantExp, tt.wantOK)
			}
		})
	}
}
