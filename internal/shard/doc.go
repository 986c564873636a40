// Package shard splits a cluster by namespace between the scanners of an
// Indexed Job and between the report writers of a sharded install: a
// namespace belongs to the shard of its 32-bit FNV-1a hash modulo the
// number of shards, so every part computes the same split without talking
// to the others.
//
// Read first: Shard, Of. It depends on the standard library only.
package shard
