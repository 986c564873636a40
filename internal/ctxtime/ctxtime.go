package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done: then it returns ctx.Err() without
// waiting for the rest of d. A d of zero or less returns at once (nil,
// or ctx.Err() when ctx is already done).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
