package mutate

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// builtValue is node.value as it was before value returned the resource's
// own maps and lists: every map and list of an expanded node is built.
func builtValue(n *node) (any, error) {
	if n == nil {
		return nil, nil
	}
	if n.lazy {
		return n.raw, nil
	}
	switch n.kind {
	case mapNode:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("mapping key %q already defined", k)
			}
			v, err := builtValue(n.vals[i])
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case listNode:
		l := make([]any, len(n.items))
		for i, item := range n.items {
			v, err := builtValue(item)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	}
	return n.value()
}

// TestValueShares checks that the value of an expanded node of the
// resource is the resource's own map or list exactly when the node still
// holds the same, and otherwise what building it gives.
func TestValueShares(t *testing.T) {
	resource := func() map[string]any {
		return map[string]any{
			"a": "x", "b": 1.5, "c": true, "d": nil,
			"m": map[string]any{"k": "v", "n": map[string]any{"z": 0.0}},
			"l": []any{"p", map[string]any{"q": "r"}, nil},
			"e": []any{},
		}
	}
	// Each edit expands the root (and the nodes it reaches) and changes
	// them, or not.
	tests := []struct {
		name       string
		edit       func(n *node)
		wantShared bool
	}{
		{"expanded only", func(n *node) { n.expand() }, true},
		{"expanded deeply", func(n *node) {
			n.field("m").field("n").expand()
			n.field("l").expand()
			n.field("l").items[1].expand()
			n.field("e").expand()
		}, true},
		{"same scalar set again", func(n *node) { n.setField("a", plainScalar("x")) }, true},
		{"scalar changed", func(n *node) { n.setField("a", plainScalar("y")) }, false},
		{"number of another type", func(n *node) { n.setField("b", &node{kind: scalarNode, text: "1.5", val: float32(1.5)}) }, false},
		{"negative zero", func(n *node) {
			n.field("m").field("n").setField("z", &node{kind: scalarNode, text: "-0", val: negZero()})
		}, false},
		{"key added", func(n *node) { n.setField("f", plainScalar("g")) }, false},
		{"key removed", func(n *node) { n.clearField("a") }, false},
		{"key renamed", func(n *node) { n.renameField("a", "aa") }, false},
		{"key renamed to a later one", func(n *node) { n.renameField("a", "z") }, false},
		{"key renamed to an existing one", func(n *node) { n.renameField("c", "b") }, false},
		{"first key renamed to the next", func(n *node) { n.renameField("a", "b") }, false},
		{"nested map changed", func(n *node) { n.field("m").field("n").setField("z", plainScalar("1")) }, false},
		{"list item changed", func(n *node) { n.field("l").expand(); n.field("l").items[2] = plainScalar("s") }, false},
		{"list item removed", func(n *node) { l := n.field("l"); l.expand(); l.items = l.items[:2] }, false},
		{"list items swapped", func(n *node) { l := n.field("l"); l.expand(); l.items[0], l.items[2] = l.items[2], l.items[0] }, false},
		{"empty list got an item", func(n *node) { l := n.field("e"); l.expand(); l.items = append(l.items, plainScalar("t")) }, false},
		{"map replaced by a copy", func(n *node) { n.setField("m", n.field("m").copy()) }, true},
		{"key order broken", func(n *node) {
			n.expand()
			n.keys[0], n.keys[1] = n.keys[1], n.keys[0]
			n.vals[0], n.vals[1] = n.vals[1], n.vals[0]
		}, false},
		{"duplicate key", func(n *node) { n.expand(); n.keys[1] = n.keys[0] }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resource()
			n := lazyNode(res)
			tt.edit(n)
			got, err := n.value()
			want, wantErr := builtValue(n)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("value() error = %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("value() mismatch (-want +got):\n%s", diff)
			}
			if err == nil && identical(got, any(res)) != tt.wantShared {
				t.Errorf("value() is the resource's map: %v, want %v", !tt.wantShared, tt.wantShared)
			}
		})
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

// TestSetLazy: the nodes expand makes in place are those lazyNode makes.
func TestSetLazy(t *testing.T) {
	tests := []any{
		nil, "", "x", true, false, 0.0, -1.5, 1e21, 1e-7, math.NaN(), math.Inf(1),
		int64(7), 3, float32(0.5), json.Number("12.50"), json.Number("x"),
		map[string]any{"a": "b"}, map[string]any(nil), []any{1.0}, []any(nil),
		[]map[string]any{{"a": "b"}}, struct{}{},
	}
	for _, give := range tests {
		var got node
		got.setLazy(give)
		want := lazyNode(give)
		if diff := cmp.Diff(*want, got, cmp.AllowUnexported(node{}), cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("setLazy(%#v) mismatch (-want +got):\n%s", give, diff)
		}
	}
}
