package main

import (
	"runtime/debug"
	"testing"
)

func TestApplyGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tests := []struct {
		name string
		env  string
		flag int
		want int
	}{
		{"flag", "", 400, 400},
		{"zero keeps the runtime's", "", 0, 100},
		{"GOGC wins", "150", 400, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			t.Setenv("GOGC", tt.env)
			if got := applyGCPercent(tt.flag); got != tt.want {
				t.Errorf("applyGCPercent(%d) with GOGC=%q = %d, want %d", tt.flag, tt.env, got, tt.want)
			}
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Errorf("after applyGCPercent(%d) the GC percent is %d, want %d", tt.flag, got, tt.want)
			}
		})
	}
}
