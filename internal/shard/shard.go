package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is shard Index of Count (0 <= Index < Count). The zero value is
// the whole cluster (one shard).
//
// A resource belongs to the shard of its namespace (Of); cluster-scoped
// resources have the namespace "" and all belong to the shard Of("",
// Count).
type Shard struct {
	Index, Count int
}

// Parse parses "i/n" (0 <= i < n). An empty string is the whole cluster.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{Index: 0, Count: 1}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, such as 0/4", s)
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: index %q is not a number", s, is)
	}
	n, err := strconv.Atoi(ns)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: count %q is not a number", s, ns)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.Check(); err != nil {
		return Shard{}, fmt.Errorf("shard %q: %w", s, err)
	}
	return sh, nil
}

// Check reports an index or count out of range.
func (s Shard) Check() error {
	if s.Count < 1 {
		return fmt.Errorf("count %d: want at least 1", s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("index %d: want 0 to %d", s.Index, s.Count-1)
	}
	return nil
}

// String is "i/n".
func (s Shard) String() string {
	s = s.Normal()
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Normal maps the zero value to 0/1.
func (s Shard) Normal() Shard {
	if s.Count == 0 {
		return Shard{Index: 0, Count: 1}
	}
	return s
}

// Owns reports whether the resources of namespace ("" for cluster-scoped
// resources) belong to s.
func (s Shard) Owns(namespace string) bool {
	s = s.Normal()
	return int(Of(namespace, uint32(s.Count))) == s.Index
}

// Of is the shard of namespace among n shards: the FNV-1a 32-bit hash of
// the namespace name modulo n ("" for cluster-scoped resources); 0 when n
// is 0 or 1.
func Of(namespace string, n uint32) uint32 {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(namespace))
	return h.Sum32() % n
}
