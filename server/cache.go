package server

import (
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/verdict-policy/verdict/engine/policy"
)

// cacheKey names one version of a policy document: its identity
// ("ClusterPolicy//name", "Policy/ns/name", or "inline" for a document sent
// with a request) and the SHA-256 of its bytes.
type cacheKey struct {
	identity string
	hash     string
}

func (k cacheKey) String() string { return k.identity + "@" + k.hash }

// compiled is a cached compilation: the policies of a document, or why it
// did not compile. Errors are cached too, so a bad inline policy sent again
// and again is not compiled again and again.
type compiled struct {
	policies []*policy.Policy
	err      error
}

// compileCache holds compiled policies in an LRU keyed by identity and
// content hash. A miss compiles once even when many requests miss the same
// key at the same time (singleflight).
type compileCache struct {
	lru     *lru.Cache[cacheKey, *compiled]
	group   singleflight.Group
	metrics *metrics
}

func newCompileCache(size int, m *metrics) *compileCache {
	c := &compileCache{metrics: m}
	// lru.NewWithEvict fails only for a size below 1, which Options
	// defaults rule out.
	c.lru, _ = lru.NewWithEvict(size, func(cacheKey, *compiled) {
		m.cacheEvictions.Inc()
	})
	return c
}

// get returns the compilation of key, calling build on a miss.
func (c *compileCache) get(key cacheKey, build func() ([]*policy.Policy, error)) ([]*policy.Policy, error) {
	if v, ok := c.lru.Get(key); ok {
		c.metrics.cacheHits.Inc()
		return v.policies, v.err
	}
	c.metrics.cacheMisses.Inc()
	v, _, _ := c.group.Do(key.String(), func() (any, error) {
		// Another caller may have finished compiling between our Get and
		// Do.
		if v, ok := c.lru.Peek(key); ok {
			return v, nil
		}
		ps, err := build()
		v := &compiled{policies: ps, err: err}
		c.metrics.compiles.Inc()
		c.lru.Add(key, v)
		c.metrics.cacheSize.Set(float64(c.lru.Len()))
		return v, nil
	})
	res := v.(*compiled)
	return res.policies, res.err
}
