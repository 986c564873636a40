package mutate

import (
	"fmt"
	"testing"
)

// slowEmptyMerge merges an empty patch into res through kyaml's walk over
// fully converted nodes, where the shortcuts taken for unchanged parts of
// the resource never apply.
func slowEmptyMerge(t *testing.T, res map[string]any) any {
	t.Helper()
	rn, err := toNode(res)
	if err != nil {
		t.Fatal(err)
	}
	m, err := merge(&node{kind: mapNode}, rn)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		return nil
	}
	v, err := m.value()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func podWithPorts(ports []any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "ports": ports}}}}
}

// TestUnchangedPorts pins unchanged on a list with two merge keys
// (containerPort, protocol), against the full walk.
func TestUnchangedPorts(t *testing.T) {
	p := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		ports []any
		want  bool
	}{
		{"both keys", []any{p("containerPort", 8080.0, "protocol", "TCP")}, true},
		{"protocol missing", []any{p("containerPort", 8080.0)}, true},
		{"two ports, no protocol", []any{p("containerPort", 8080.0), p("containerPort", 9090.0)}, true},
		{"same port, one with protocol", []any{p("containerPort", 8080.0), p("containerPort", 8080.0, "protocol", "UDP")}, false},
		{"same port, two protocols", []any{p("containerPort", 8080.0, "protocol", "TCP"), p("containerPort", 8080.0, "protocol", "UDP")}, true},
		{"port and protocol apart", []any{p("containerPort", 8080.0), p("protocol", "UDP")}, false},
		{"same port twice", []any{p("containerPort", 8080.0, "name", "a"), p("containerPort", 8080.0, "name", "b")}, false},
		{"only protocol", []any{p("protocol", "TCP")}, true},
		{"one without protocol", []any{p("containerPort", 8080.0, "protocol", "UDP"), p("containerPort", 9090.0)}, false},
		{"no key", []any{p("name", "x")}, false},
		{"empty protocol", []any{p("containerPort", 8080.0, "protocol", "")}, false},
		{"null port", []any{p("containerPort", nil)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podWithPorts(tt.ports)
			if got := unchanged(pod, nil); got != tt.want {
				t.Errorf("unchanged(ports %v) = %v, want %v", tt.ports, got, tt.want)
			}
			if tt.want {
				if got := slowEmptyMerge(t, pod); !Equal(pod, got) {
					t.Errorf("unchanged(ports %v) = true but kyaml's walk gives %v", tt.ports, got)
				}
			}
		})
	}
}

// FuzzUnchanged checks the promise of unchanged: when it holds, kyaml's
// walk with no patch gives the resource back. The fuzzer picks, for up to
// four ports, which of containerPort, protocol and name they have and
// with which values.
func FuzzUnchanged(f *testing.F) {
	f.Add([]byte{0x13, 0x21, 0x07, 0x30})
	f.Add([]byte{0x01, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8 {
			return
		}
		var ports []any
		for _, b := range data {
			m := map[string]any{}
			if b&1 != 0 {
				m["containerPort"] = float64(8080 + int(b>>4&1))
			}
			if b&2 != 0 {
				m["protocol"] = []string{"TCP", "UDP"}[b>>5&1]
			}
			if b&4 != 0 {
				m["name"] = []string{"a", "b"}[b>>6&1]
			}
			if b&8 != 0 && b&1 != 0 {
				m["containerPort"] = nil
			}
			ports = append(ports, m)
		}
		pod := podWithPorts(ports)
		if !unchanged(pod, nil) {
			return
		}
		if got := slowEmptyMerge(t, pod); !Equal(pod, got) {
			t.Fatalf("unchanged(ports %v) = true but kyaml's walk gives %v", ports, got)
		}
	})
}

// TestUniqueByKeysLong pins uniqueByKeys on lists longer than the small
// set it keeps the keys in before a map, against the full walk.
func TestUniqueByKeysLong(t *testing.T) {
	containers := func(n, dup int) []any {
		var out []any
		for i := range n {
			name := fmt.Sprintf("c%d", i)
			if i == n-1 && dup >= 0 {
				name = fmt.Sprintf("c%d", dup)
			}
			out = append(out, map[string]any{"name": name})
		}
		return out
	}
	tests := []struct {
		name       string
		containers []any
		want       bool
	}{
		{"16 distinct", containers(16, -1), true},
		{"17 distinct", containers(17, -1), true},
		{"40 distinct", containers(40, -1), true},
		{"16, last repeats the first", containers(16, 0), false},
		{"17, last repeats the first", containers(17, 0), false},
		{"40, last repeats the 20th", containers(40, 20), false},
		{"40, last repeats the 39th", containers(40, 38), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"containers": tt.containers}}
			if got := unchanged(pod, nil); got != tt.want {
				t.Errorf("unchanged(%d containers) = %v, want %v", len(tt.containers), got, tt.want)
			}
			if tt.want {
				if got := slowEmptyMerge(t, pod); !Equal(pod, got) {
					t.Errorf("unchanged(%d containers) = true but kyaml's walk gives %v", len(tt.containers), got)
				}
			}
		})
	}
}
