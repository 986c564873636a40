package server

import (
	"reflect"
	"sync"
)

// memSize estimates the bytes of memory reachable from v: every value
// reached through pointers, interfaces, slices (their capacity), maps and
// strings, each counted once, plus an estimate of each map's overhead. It
// walks the value with reflection, so it sees unexported fields, but not
// what closures capture or memory behind unsafe pointers. Measured on
// compiled policies of several shapes (validate patterns, deny conditions,
// CEL expressions, podSecurity, autogen), it was from 5% below to 20%
// above the heap they held, and 2.5 times above it for a policy of long
// messages (strings that share their document's buffer are counted once
// each). It costs about a quarter of the compilation it measures. A
// compiled ValidatingPolicy with its two autogen variants measures about
// 210 KB without the shared CEL environment (sharedMemory), for 190 KB
// of heap.
//
// The walk keeps its own stack, so that a deeply nested value does not
// take the goroutine stack's depth.
func memSize(v any) int64 { return measure(v, nil, map[uintptr]struct{}{}) }

// measure is memSize of v, not counting the addresses in shared and
// recording those it counts in seen.
func measure(v any, shared, seen map[uintptr]struct{}) int64 {
	if v == nil {
		return 0
	}
	s := &sizer{shared: shared, seen: seen, flat: map[reflect.Type]bool{}}
	rv := reflect.ValueOf(v)
	n := int64(rv.Type().Size())
	s.push(rv)
	for len(s.stack) > 0 {
		v := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		n += s.visit(v)
	}
	return n
}

type sizer struct {
	// shared holds addresses that are not counted (sharedMemory); it is
	// only read.
	shared map[uintptr]struct{}
	// seen holds the addresses already counted (of pointed-to values,
	// slice arrays and maps).
	seen map[uintptr]struct{}
	// flat caches whether a type holds no references.
	flat map[reflect.Type]bool
	// stack holds the values to visit, none of them flat.
	stack []reflect.Value
}

// push adds v to the values to visit, unless it references nothing.
func (s *sizer) push(v reflect.Value) {
	if !s.isFlat(v.Type()) {
		s.stack = append(s.stack, v)
	}
}

// isFlat reports whether values of t reference no other memory.
func (s *sizer) isFlat(t reflect.Type) bool {
	if f, ok := s.flat[t]; ok {
		return f
	}
	s.flat[t] = false // a recursive type refers to itself: not flat
	f := true
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.String,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		f = false
	case reflect.Array:
		f = s.isFlat(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !s.isFlat(t.Field(i).Type) {
				f = false
				break
			}
		}
	}
	s.flat[t] = f
	return f
}

// first reports whether the address p is counted for the first time.
func (s *sizer) first(p uintptr) bool {
	if _, ok := s.seen[p]; ok {
		return false
	}
	if _, ok := s.shared[p]; ok {
		return false
	}
	s.seen[p] = struct{}{}
	return true
}

// visit returns the bytes that v references directly, not counting v
// itself, and pushes the values inside them (and inside v) to visit.
func (s *sizer) visit(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || !s.first(v.Pointer()) {
			return 0
		}
		e := v.Elem()
		s.push(e)
		return int64(e.Type().Size())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			s.push(e)
			return 0
		}
		s.push(e)
		return int64(e.Type().Size())
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		if v.Cap() == 0 || !s.first(v.Pointer()) {
			return 0
		}
		if !s.isFlat(v.Type().Elem()) {
			for i := range v.Len() {
				s.push(v.Index(i))
			}
		}
		return int64(v.Cap()) * int64(v.Type().Elem().Size())
	case reflect.Array:
		for i := range v.Len() {
			s.push(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			s.push(v.Field(i))
		}
	case reflect.Map:
		if v.IsNil() || !s.first(v.Pointer()) {
			return 0
		}
		t := v.Type()
		if !s.isFlat(t.Key()) || !s.isFlat(t.Elem()) {
			it := v.MapRange()
			for it.Next() {
				s.push(it.Key())
				s.push(it.Value())
			}
		}
		// Buckets hold keys, values and a byte of hash each, at a load
		// of about one half.
		return 48 + int64(v.Len())*int64(t.Key().Size()+t.Elem().Size()+1)*2
	}
	return 0
}

// maxSharedRoots bounds the shared values whose memory a sharedMemory
// leaves out (each costs a set of its addresses, about 20 bytes for each
// of the 4,000 objects of a CEL environment; the engine keeps 4 for
// validate.cel and at most 65 for the policies.kyverno.io kinds): the first ones reported are left out, later ones are
// charged to the policies that reach them, which overstates their size
// and keeps the cache within its budget.
const maxSharedRoots = 128

// sharedMemory measures compiled policies without the memory they share
// with the rest of the process: the values of roots (policy.Shared, the
// CEL environments the engine keeps for the process's lifetime) and
// everything they reach. A compiled ValidatingPolicy's programs reach
// its CEL environment, about 700 KB of declarations and types shared by
// every policy; without this, each cached policy would be charged for it.
// The roots must live as long as the process (an address they held could
// be reused otherwise).
type sharedMemory struct {
	roots func() []any

	mu     sync.RWMutex
	walked map[uintptr]bool     // roots already walked; guarded by mu
	seen   map[uintptr]struct{} // the addresses they reach; guarded by mu
}

func newSharedMemory(roots func() []any) *sharedMemory {
	return &sharedMemory{roots: roots, walked: map[uintptr]bool{}, seen: map[uintptr]struct{}{}}
}

// size is memSize of v without the shared memory. Roots reported since
// the last call are walked first.
func (m *sharedMemory) size(v any) int64 {
	if m == nil {
		return memSize(v)
	}
	m.addRoots()
	m.mu.RLock()
	defer m.mu.RUnlock()
	return measure(v, m.seen, map[uintptr]struct{}{})
}

func (m *sharedMemory) addRoots() {
	roots := m.roots()
	m.mu.RLock()
	fresh := false
	for _, r := range roots {
		if p := rootAddress(r); p != 0 && !m.walked[p] && len(m.walked) < maxSharedRoots {
			fresh = true
			break
		}
	}
	m.mu.RUnlock()
	if !fresh {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range roots {
		p := rootAddress(r)
		if p == 0 || m.walked[p] || len(m.walked) >= maxSharedRoots {
			continue
		}
		m.walked[p] = true
		measure(r, nil, m.seen)
	}
}

// rootAddress is the address of a root held by pointer, 0 otherwise.
func rootAddress(r any) uintptr {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0
	}
	return v.Pointer()
}
