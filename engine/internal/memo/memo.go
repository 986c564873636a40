package memo

import (
	"sync"
	"sync/atomic"
)

// Bounded caches at most max values: keys can come from callers' inline
// policies, so the cache must not grow without end. Once it is full, the
// values of other keys are made on every Get. The zero value is not
// usable; use New.
type Bounded[K comparable, V any] struct {
	max    int64
	stored atomic.Int64
	m      sync.Map // K -> V
}

// New returns a cache of at most max values.
func New[K comparable, V any](max int) *Bounded[K, V] {
	return &Bounded[K, V]{max: int64(max)}
}

// Get returns the value of k, made by make(k) the first time. make must
// give equal values for equal keys: concurrent first uses may each make
// one.
func (b *Bounded[K, V]) Get(k K, make func(K) V) V {
	if v, ok := b.m.Load(k); ok {
		return v.(V)
	}
	v := make(k)
	if b.stored.Add(1) <= b.max {
		b.m.Store(k, v)
	}
	return v
}

// Len is the number of values stored.
func (b *Bounded[K, V]) Len() int {
	return int(min(b.stored.Load(), b.max))
}
