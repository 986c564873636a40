package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// cacheKey names one version of a policy document: its identity
// ("ClusterPolicy//name", "Policy/ns/name", or "inline" for a document sent
// with a request) and the SHA-256 of its bytes.
type cacheKey struct {
	identity string
	hash     string
}

func (k cacheKey) String() string { return k.identity + "@" + k.hash }

// compiled is a cached compilation: the policies of a document (and the
// PolicyExceptions of an inline document), or why it did not compile.
// Errors are cached too, so a bad inline policy sent again and again is
// not compiled again and again.
type compiled struct {
	policies      []*policy.Policy
	exceptions    []*policy.Exception
	celExceptions []*vpol.Exception
	err           error
	// rules is the number of rules of the document as written (before
	// autogen).
	rules int
	// bytes is the memory the compilation holds (memSize, without the
	// memory it shares with the process: sharedMemory), measured only by a
	// cache with a byte budget.
	bytes int64
}

// compileCache holds compiled policies in an LRU keyed by identity and
// content hash, bounded by a number of entries and, when budget > 0, by
// the bytes they hold: least recently used entries are evicted past the
// budget, and a compilation larger than the whole budget is replaced by
// an error (a *limitError, itself cached). A miss compiles once even when
// many requests miss the same key at the same time; the others wait for
// it, without their evaluation slot, until their context ends.
type compileCache struct {
	lru     *lru.Cache[cacheKey, *compiled]
	metrics *metrics
	budget  int64
	// shared is the memory that entries do not own (the engine's CEL
	// environments), left out of their size.
	shared *sharedMemory

	mu      sync.Mutex // serialises adds (and so evictions) and flights
	bytes   int64      // bytes of the entries; guarded by mu
	flights map[cacheKey]*flight
}

// flight is a compilation in progress; v is set when done is closed.
type flight struct {
	done chan struct{}
	v    *compiled
}

// errCompilePanicked is the compilation a waiter gets when the compiler
// panicked (the panic itself goes to the call that compiled).
var errCompilePanicked = errors.New("the compilation of this document failed (internal error)")

func newCompileCache(size int, budget int64, shared *sharedMemory, m *metrics) *compileCache {
	c := &compileCache{metrics: m, budget: budget, shared: shared, flights: map[cacheKey]*flight{}}
	// lru.NewWithEvict fails only for a size below 1, which Options
	// defaults rule out. The LRU evicts only in add, under c.mu.
	c.lru, _ = lru.NewWithEvict(size, func(_ cacheKey, v *compiled) {
		c.bytes -= v.bytes
		m.cacheEvictions.Inc()
		m.cacheSize.Dec()
		if c.budget > 0 {
			m.inlineCacheBytes.Sub(float64(v.bytes))
		}
	})
	return c
}

// peek returns the compilation of key if it is cached, counting a hit.
func (c *compileCache) peek(key cacheKey) (*compiled, bool) {
	v, ok := c.lru.Get(key)
	if ok {
		c.metrics.cacheHits.Inc()
	}
	return v, ok
}

// get returns the compilation of key, calling build on a miss. It fails
// only with the error of ctx, when ctx ends while another call compiles
// the same key.
func (c *compileCache) get(ctx context.Context, key cacheKey, build func() *compiled) (*compiled, error) {
	if v, ok := c.peek(key); ok {
		return v, nil
	}
	c.metrics.cacheMisses.Inc()
	c.mu.Lock()
	// Another call may have finished compiling since.
	if v, ok := c.lru.Peek(key); ok {
		c.mu.Unlock()
		return v, nil
	}
	if f, ok := c.flights[key]; ok {
		c.mu.Unlock()
		resume := pause(ctx) // the compiling call holds a slot
		defer resume()
		select {
		case <-f.done:
			return f.v, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.mu.Unlock()
	defer func() {
		if f.v == nil { // build panicked
			f.v = &compiled{err: errCompilePanicked}
		}
		c.mu.Lock()
		delete(c.flights, key)
		c.mu.Unlock()
		close(f.done)
	}()
	v := build()
	c.metrics.compiles.Inc()
	v = c.add(key, v)
	f.v = v
	return v, nil
}

// add caches v under key and returns what is cached: v, or the error that
// replaces a compilation larger than the budget.
func (c *compileCache) add(key cacheKey, v *compiled) *compiled {
	if c.budget > 0 {
		v.bytes = c.shared.size(v)
		if v.bytes > c.budget {
			v = &compiled{rules: v.rules, err: &limitError{description: fmt.Sprintf(
				"the compiled policies take %d bytes, more than the %d bytes the server keeps for compiled inline policies",
				v.bytes, c.budget)}}
			v.bytes = memSize(v)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, found, _ := c.lru.PeekOrAdd(key, v); found {
		return old
	}
	c.bytes += v.bytes
	c.metrics.cacheSize.Inc()
	if c.budget > 0 {
		c.metrics.inlineCacheBytes.Add(float64(v.bytes))
		for c.bytes > c.budget {
			if _, _, ok := c.lru.RemoveOldest(); !ok {
				break
			}
		}
	}
	return v
}
