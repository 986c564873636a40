package ctxtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		wantErr error
	}{
		{name: "timer", ctx: context.Background(), d: time.Millisecond},
		{name: "no wait", ctx: context.Background(), d: 0},
		// An hour would fail the test's deadline if Sleep waited for it.
		{name: "canceled", ctx: canceled, d: time.Hour, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Sleep(tt.ctx, tt.d); !errors.Is(err, tt.wantErr) {
				t.Errorf("Sleep(%s) = %v, want %v", tt.d, err, tt.wantErr)
			}
		})
	}
}
