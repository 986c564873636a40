package main

import (
	"context"
	"testing"
	"time"
)

func TestTraceFlagsProvider(t *testing.T) {
	tests := []struct {
		name         string
		flags        traceFlags
		wantProvider bool
		wantErr      bool
	}{
		{"off by default", traceFlags{sampleRatio: 0.01}, false, false},
		{"endpoint", traceFlags{endpoint: "127.0.0.1:4317", insecure: true, sampleRatio: 0.5}, true, false},
		{"ratio above 1", traceFlags{endpoint: "127.0.0.1:4317", sampleRatio: 2}, false, true},
		{"negative ratio", traceFlags{endpoint: "127.0.0.1:4317", sampleRatio: -0.1}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, stop, err := tt.flags.provider(t.Context(), "verdict-test")
			if (err != nil) != tt.wantErr {
				t.Fatalf("provider(%+v) error = %v, want error: %v", tt.flags, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if (tp != nil) != tt.wantProvider {
				t.Errorf("provider(%+v) = %v, want a provider: %v", tt.flags, tp, tt.wantProvider)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = stop(ctx) // nothing was recorded: no export is attempted
		})
	}
}
