package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

func TestRunCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"run", "--policies", "../../examples/policies", "--listen", "127.0.0.1:0", "--log-level", "error", "--reports-db", filepath.Join(t.TempDir(), "reports.db")}, outW, &stderr)
		outW.Close()
	}()

	// The banner names the address.
	addrRE := regexp.MustCompile(`server on (127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(outR)
	var addr string
	var banner []string
	for sc.Scan() {
		banner = append(banner, sc.Text())
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("verdict run printed no address: %q (stderr %q)", banner, stderr.String())
	}
	go io.Copy(io.Discard, outR)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := verdictv1.NewDecisionServiceClient(conn)
	obj := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx:latest"}]}}`)
	var resp *verdictv1.EvaluateResponse
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err = c.Evaluate(ctx, &verdictv1.EvaluateRequest{Object: obj})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Evaluate against verdict run: %v", err)
	}
	if resp.GetAllowed() || !strings.Contains(resp.GetMessage(), "was blocked due to the following policies") {
		t.Errorf("Evaluate(Pod without team label) = allowed %v, message %q; want blocked by the example policies", resp.GetAllowed(), resp.GetMessage())
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("verdict run after Ctrl-C: exit code %d, want 0 (stderr %q)", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("verdict run did not stop within 30s of its context ending")
	}
}

func TestServeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty-tokens")
	if err := os.WriteFile(empty, []byte("# none\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		give     []string
		wantCode int
		wantErr  string
	}{
		{"missing policy folder", []string{"serve", "--policies", filepath.Join(dir, "nope"), "--listen", "127.0.0.1:0"}, 2, "not a folder"},
		{"bad log level", []string{"serve", "--listen", "127.0.0.1:0", "--log-level", "loud"}, 2, "--log-level"},
		{"bad log format", []string{"serve", "--listen", "127.0.0.1:0", "--log-format", "xml"}, 2, "--log-format"},
		{"token file without tokens", []string{"serve", "--listen", "127.0.0.1:0", "--token-file", empty}, 2, "no token"},
		{"key without certificate", []string{"serve", "--listen", "127.0.0.1:0", "--tls-key", empty}, 2, "certificate and a key"},
		{"bad listen address", []string{"serve", "--listen", "nope:-1", "--metrics-listen", ""}, 2, "--listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.give, &stdout, &stderr)
			if got != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tt.give, got, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}
