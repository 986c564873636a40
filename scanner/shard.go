package scanner

import "github.com/verdict-policy/verdict/internal/shard"

// Shard is the part of a cluster one scanner scans: shard Index of Count
// (0 <= Index < Count). The zero value is the whole cluster (one shard).
//
// A resource belongs to the shard of its namespace (internal/shard: the
// 32-bit FNV-1a hash of the namespace name modulo Count). Cluster-scoped
// resources have the namespace "" and are all scanned by the shard
// ShardOf("", Count) (the report writer scopes its scan markers the same
// way). Every namespace is in exactly one shard, and the assignment
// depends only on its name and Count, so n scanners (an Indexed Job of n
// pods, each with --shard $INDEX/n) split a cluster between them without
// talking to each other.
type Shard = shard.Shard

// ParseShard parses "i/n" (0 <= i < n). An empty string is the whole
// cluster.
func ParseShard(s string) (Shard, error) { return shard.Parse(s) }

// ShardOf is the index of the shard of namespace among count shards
// ("" for cluster-scoped resources).
func ShardOf(namespace string, count int) int {
	return int(shard.Of(namespace, uint32(max(count, 0))))
}
