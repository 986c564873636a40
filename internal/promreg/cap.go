package promreg

import (
	"sync"
	"sync/atomic"
)

// Overflow is the label value that replaces labels from requests once a
// SeriesCap is reached. No Kubernetes namespace, kind or name can hold
// an underscore, so it never names a real one.
const Overflow = "_overflow"

// SeriesCap bounds the label combinations that requests add to metrics:
// Admit says yes to at most Max distinct keys, and keeps saying yes to
// those; the caller labels the others Overflow. The zero value admits
// nothing; a nil *SeriesCap admits everything.
type SeriesCap struct {
	max  int64
	n    atomic.Int64
	seen sync.Map // key -> struct{}
}

// NewSeriesCap returns a SeriesCap of max keys.
func NewSeriesCap(max int) *SeriesCap { return &SeriesCap{max: int64(max)} }

// Admit reports whether key may have its own series: it was admitted
// before, or fewer than Max keys were.
func (c *SeriesCap) Admit(key string) bool {
	if c == nil {
		return true
	}
	if _, ok := c.seen.Load(key); ok {
		return true
	}
	for {
		v := c.n.Load()
		if v >= c.max {
			return false
		}
		if c.n.CompareAndSwap(v, v+1) {
			break
		}
	}
	if _, loaded := c.seen.LoadOrStore(key, struct{}{}); loaded {
		c.n.Add(-1)
	}
	return true
}

// Len is the number of keys admitted.
func (c *SeriesCap) Len() int {
	if c == nil {
		return 0
	}
	return int(c.n.Load())
}
