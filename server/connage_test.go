package server

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestMaxConnectionAge: the server closes a client's connection after
// MaxConnectionAge, the client connects again (and would resolve the
// Service again), and no call fails on the way.
func TestMaxConnectionAge(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := &countingListener{Listener: inner}
	_, src := policyFolder(t, map[string]string{"ns.yaml": nsPurposePolicy})
	srv, err := New(Options{Sources: []PolicySource{src}, MaxConnectionAge: 200 * time.Millisecond, ShutdownTimeout: time.Second, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(ctx, lis)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	c, err := client.Dial(inner.Addr().String(), client.Options{WaitForReady: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ns := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dev"}})
	deadline := time.Now().Add(1500 * time.Millisecond)
	calls := 0
	for time.Now().Before(deadline) {
		if _, err := c.Evaluate(t.Context(), &verdictv1.EvaluateRequest{Object: ns}); err != nil {
			t.Fatalf("Evaluate after %d calls: %v", calls, err)
		}
		calls++
		time.Sleep(20 * time.Millisecond)
	}
	if n := lis.accepted.Load(); n < 3 {
		t.Errorf("connections accepted over 1.5s with MaxConnectionAge 200ms = %d, want at least 3", n)
	}
}
