package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/server"
)

// TestStartDial starts a server without policies and lists them.
func TestStartDial(t *testing.T) {
	addr := Start(t, server.Options{})
	c := Dial(t, addr, client.Options{})
	list, err := c.ListPolicies(context.Background())
	if err != nil {
		t.Fatalf("ListPolicies() = %v", err)
	}
	if n := len(list.GetPolicies()); n != 0 {
		t.Errorf("ListPolicies() = %d policies, want 0", n)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{d, 50, 50}, {d, 99, 99}, {d, 100, 100}, {d, 1, 1}, {d, 0, 1},
		{d[:3], 50, 2}, {d[:1], 99, 1}, {nil, 50, 0},
	} {
		if got := Percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("Percentile(%d values, %d) = %v, want %v", len(tt.in), tt.p, got, tt.want)
		}
	}
}
