package promreg

import (
	"fmt"
	"testing"
)

func TestSeriesCapAdmit(t *testing.T) {
	tests := []struct {
		name string
		max  int
		keys []string
		want []bool
	}{
		{name: "under the cap", max: 3, keys: []string{"a", "b"}, want: []bool{true, true}},
		{name: "at the cap", max: 2, keys: []string{"a", "b", "a", "b"}, want: []bool{true, true, true, true}},
		{name: "over the cap", max: 2, keys: []string{"a", "b", "c", "a"}, want: []bool{true, true, false, true}},
		{name: "zero", max: 0, keys: []string{"a"}, want: []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewSeriesCap(tt.max)
			for i, k := range tt.keys {
				if got := c.Admit(k); got != tt.want[i] {
					t.Errorf("Admit(%q) #%d = %v, want %v", k, i, got, tt.want[i])
				}
			}
			if c.Len() > tt.max {
				t.Errorf("Len() = %d, want at most %d", c.Len(), tt.max)
			}
		})
	}
}

func TestSeriesCapNil(t *testing.T) {
	var c *SeriesCap
	for i := range 3 {
		if k := fmt.Sprint(i); !c.Admit(k) {
			t.Errorf("(*SeriesCap)(nil).Admit(%q) = false, want true", k)
		}
	}
}
