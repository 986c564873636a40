package kubelookup

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// ttlCache keeps the results of reads (values and errors, such as not
// found) for ttl, in an LRU of size entries. Concurrent misses of one key
// read once (singleflight).
type ttlCache[V any] struct {
	lru   *lru.Cache[string, ttlEntry[V]]
	group singleflight.Group
	ttl   time.Duration
	now   func() time.Time
}

type ttlEntry[V any] struct {
	v       V
	err     error
	expires time.Time
}

func newTTLCache[V any](size int, ttl time.Duration, now func() time.Time) *ttlCache[V] {
	// lru.New fails only for a size below 1, which Options defaults rule
	// out.
	c, _ := lru.New[string, ttlEntry[V]](size)
	return &ttlCache[V]{lru: c, ttl: ttl, now: now}
}

// get returns the value of key, calling read when it is missing or
// expired. Errors for which keep is false are returned but not kept.
func (c *ttlCache[V]) get(key string, read func() (V, error), keep func(error) bool) (V, error) {
	if e, ok := c.lru.Get(key); ok && c.now().Before(e.expires) {
		return e.v, e.err
	}
	r, _, _ := c.group.Do(key, func() (any, error) {
		v, err := read()
		e := ttlEntry[V]{v: v, err: err, expires: c.now().Add(c.ttl)}
		if err == nil || keep(err) {
			c.lru.Add(key, e)
		}
		return e, nil
	})
	e := r.(ttlEntry[V])
	return e.v, e.err
}
