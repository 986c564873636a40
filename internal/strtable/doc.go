// Package strtable shares the strings that repeat across thousands of
// report entries (policy names and hashes, rules, messages, categories,
// kinds, namespaces): a batch decoded from the wire has its own copy of
// each, and a component that keeps every entry of a scan (the report
// writer's model, the scanner's unacknowledged results) holds one copy
// each through a Table instead of one per entry.
//
// A Table is bounded (MaxStrings, MaxLen) and owned by one goroutine.
//
// Read first: Table. It depends on the standard library only.
package strtable
