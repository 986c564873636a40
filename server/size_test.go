package server

import (
	"runtime/debug"
	"strings"
	"testing"
)

type sizeNode struct {
	name string
	next *sizeNode
	ids  []int64
}

// TestMemSize checks memSize on values whose size is known: strings and
// slices by length and capacity, shared and cyclic references counted
// once.
func TestMemSize(t *testing.T) {
	shared := &sizeNode{name: strings.Repeat("s", 100)}
	cycle := &sizeNode{name: "c"}
	cycle.next = cycle
	const node = 48 // string 16 + pointer 8 + slice 24
	tests := []struct {
		name string
		give any
		want int64
	}{
		{"nil", nil, 0},
		{"int", 7, 8},
		{"string", strings.Repeat("x", 1000), 16 + 1000},
		{"slice of flat values", make([]int64, 10, 50), 24 + 50*8},
		{"node", &sizeNode{name: "abcd", ids: make([]int64, 4)}, 8 + node + 4 + 32},
		{"shared pointer counted once", []*sizeNode{shared, shared}, 24 + 2*8 + node + 100},
		{"cycle", cycle, 8 + node + 1},
	}
	for _, tt := range tests {
		if got := memSize(tt.give); got != tt.want {
			t.Errorf("memSize(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
	m := map[string]int64{"a": 1, "b": 2}
	if got := memSize(m); got < 8+48+2*(16+8)+2 {
		t.Errorf("memSize(map of 2) = %d, want at least its entries", got)
	}
}

// TestMemSizeDeep measures a list 100,000 nodes long with a goroutine
// stack limited to 4 MB: the walk must not recurse once per level.
func TestMemSizeDeep(t *testing.T) {
	const n, node = 100_000, 48
	var head *sizeNode
	for range n {
		head = &sizeNode{next: head}
	}
	defer debug.SetMaxStack(debug.SetMaxStack(4 << 20))
	if got, want := memSize(head), int64(8+n*node); got != want {
		t.Errorf("memSize(list of %d nodes) = %d, want %d", n, got, want)
	}
}
