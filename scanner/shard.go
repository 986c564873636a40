package scanner

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is the part of a cluster one scanner scans: shard Index of Count
// (0 <= Index < Count). The zero value is the whole cluster (one shard).
//
// A resource belongs to the shard of its namespace: the 32-bit FNV-1a hash
// of the namespace name modulo Count. Cluster-scoped resources have the
// namespace "" and are all scanned by the shard ShardOf("", Count) (the
// report writer scopes its scan markers the same way). Every namespace is
// in exactly one shard, and the assignment depends only on its name and
// Count, so n scanners (an Indexed Job of n pods, each with --shard
// $INDEX/n) split a cluster between them without talking to each other.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" (0 <= i < n). An empty string is the whole
// cluster.
func ParseShard(s string) (Shard, error) {
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
	if err := sh.check(); err != nil {
		return Shard{}, fmt.Errorf("shard %q: %w", s, err)
	}
	return sh, nil
}

func (s Shard) check() error {
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
	s = s.normal()
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// normal maps the zero value to 0/1.
func (s Shard) normal() Shard {
	if s.Count == 0 {
		return Shard{Index: 0, Count: 1}
	}
	return s
}

// ShardOf is the index of the shard of namespace among count shards
// ("" for cluster-scoped resources).
func ShardOf(namespace string, count int) int {
	if count <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(namespace))
	return int(h.Sum32() % uint32(count))
}

// Owns reports whether the resources of namespace ("" for cluster-scoped
// resources) belong to s.
func (s Shard) Owns(namespace string) bool {
	s = s.normal()
	return ShardOf(namespace, s.Count) == s.Index
}
