package servertest

import (
	"context"
	"testing"

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
