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

// TestApplyGCFlag: verdict apply has --gc-percent, default batchGCPercent;
// verdict serve keeps defaultGCPercent.
func TestApplyGCFlag(t *testing.T) {
	tests := []struct {
		cmd  string
		want string
	}{
		{"apply", "150"},
		{"serve", "400"},
	}
	root := newRootCmd()
	for _, tt := range tests {
		c, _, err := root.Find([]string{tt.cmd})
		if err != nil {
			t.Fatalf("Find(%s): %v", tt.cmd, err)
		}
		f := c.Flags().Lookup("gc-percent")
		if f == nil {
			t.Fatalf("verdict %s has no --gc-percent", tt.cmd)
		}
		if f.DefValue != tt.want {
			t.Errorf("verdict %s --gc-percent default = %s, want %s", tt.cmd, f.DefValue, tt.want)
		}
	}
}
