package servertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/server"
)

// Start runs a decision server with opts on a loopback port until the test
// ends (then it stops gracefully) and returns its address.
func Start(tb testing.TB, opts server.Options) string {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	srv, err := server.New(opts)
	if err != nil {
		lis.Close()
		tb.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(ctx, lis); err != nil {
			tb.Errorf("server Run: %v", err)
		}
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return lis.Addr().String()
}

// Dial returns a Client of the server at addr, closed when the test ends,
// once the server reports SERVING (at most 10s).
func Dial(tb testing.TB, addr string, opts client.Options) *client.Client {
	tb.Helper()
	c, err := client.Dial(addr, opts)
	if err != nil {
		tb.Fatalf("Dial(%s): %v", addr, err)
	}
	tb.Cleanup(func() { c.Close() })
	WaitServing(tb, c)
	return c
}

// WaitServing waits until c's server reports SERVING (at most 10s).
func WaitServing(tb testing.TB, c *client.Client) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.CheckHealth(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("server not SERVING after 10s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
