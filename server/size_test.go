package server

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/engine/policy"
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

// TestSharedMemory measures two compiled policies of each kind that
// reaches a CEL environment the engine keeps for the process
// (policy.Shared): measured together, they take about the sum of their
// sizes measured apart, so neither is charged for the environment (about
// 700 KB, which memSize alone counts once per measure).
func TestSharedMemory(t *testing.T) {
	celRule := func(name string) string {
		return `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: ` + name + `
spec:
  rules:
  - name: team
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      cel:
        expressions:
        - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
`
	}
	namespaced := func(name string) string {
		return strings.Replace(strings.Replace(validatingPolicy(name, "[Deny]"),
			"kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy", 1),
			"  name: "+name+"\n", "  name: "+name+"\n  namespace: team-a\n", 1)
	}
	tests := []struct {
		name    string
		doc     func(name string) string
		compile func(source string, data []byte) ([]*policy.Policy, error)
	}{
		{"ValidatingPolicy", func(n string) string { return validatingPolicy(n, "[Deny]") }, compileValidating},
		{"NamespacedValidatingPolicy", namespaced, compileValidating},
		{"ClusterPolicy with validate.cel", celRule, compileDocuments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pair []*compiled
			for _, n := range []string{"a", "b"} {
				ps, err := tt.compile(n, []byte(tt.doc(n)))
				if err != nil {
					t.Fatalf("compile %s: %v", n, err)
				}
				pair = append(pair, &compiled{policies: ps})
			}
			m := newSharedMemory(policy.Shared)
			a, b, both := m.size(pair[0]), m.size(pair[1]), m.size(pair)
			if shared := a + b - both; shared < 0 || shared > (a+b)/50 {
				t.Errorf("size(a) = %d, size(b) = %d, size(a, b) = %d: %d bytes counted in both, want at most 2%%", a, b, both, shared)
			}
			if plain := memSize(pair[0]); a > plain/2 {
				t.Errorf("size(a) = %d, memSize(a) = %d: want the shared environment (most of memSize) left out", a, plain)
			}
		})
	}
}
