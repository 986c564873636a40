//go:build unix

package client_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
)

// corpusSource holds the ClusterPolicies of the given folders of the
// kyverno/policies corpus (their policy files: one ClusterPolicy per file,
// test folders starting with a dot skipped), and skips the benchmark when
// the corpus is absent.
func corpusSource(b *testing.B, folders ...string) (*staticSource, int) {
	b.Helper()
	src := &staticSource{name: "corpus"}
	for _, f := range folders {
		dir, ok := testcorpus.Corpus(f)
		if !ok {
			b.Skipf("corpus not present at %s", dir)
		}
		files, err := testcorpus.ClusterPolicies(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, file := range files {
			var doc map[string]any
			if err := yaml.Unmarshal(file.Data, &doc); err != nil {
				b.Fatal(err)
			}
			src.docs = append(src.docs, server.Document{Origin: file.Path, Line: 1, JSON: mustJSON(b, doc)})
		}
	}
	return src, len(src.docs)
}

// readBenchPod reads the Pod the engine benchmark evaluates too.
func readBenchPod(b *testing.B) map[string]any {
	b.Helper()
	data, err := os.ReadFile("../engine/testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var pod map[string]any
	if err := yaml.Unmarshal(data, &pod); err != nil {
		b.Fatal(err)
	}
	return pod
}

// benchServer starts a server with the pod-security and best-practices
// policies and returns a connected client and the Pod's request.
func benchServer(b *testing.B) (*client.Client, *verdictv1.EvaluateRequest) {
	b.Helper()
	return benchServerWith(b, server.Options{})
}

// benchServerWith is benchServer with opts (Sources are set).
func benchServerWith(b *testing.B, opts server.Options) (*client.Client, *verdictv1.EvaluateRequest) {
	b.Helper()
	// The collector's target of verdict serve (--gc-percent 400), unless
	// GOGC is set. Client and server share this process.
	if os.Getenv("GOGC") == "" {
		prev := debug.SetGCPercent(400)
		b.Cleanup(func() { debug.SetGCPercent(prev) })
	}
	src, n := corpusSource(b, "pod-security", "best-practices")
	opts.Sources = []server.PolicySource{src}
	addr := startServer(b, opts)
	c := dial(b, addr, client.Options{})
	waitServing(b, c)
	list, err := c.ListPolicies(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	ready := 0
	for _, p := range list.GetPolicies() {
		if p.GetReady() {
			ready++
		}
	}
	if ready != n {
		b.Fatalf("server holds %d ready policies of %d", ready, n)
	}
	pod := readBenchPod(b)
	req, err := client.NewRequest(pod)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := c.Evaluate(b.Context(), req)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d policies, %d results per Pod", n, len(resp.GetResults()))
	return c, req
}

// BenchmarkEvaluate measures unary Evaluate calls over a loopback TCP
// connection at several concurrencies: latency percentiles of the calls
// and throughput.
func BenchmarkEvaluate(b *testing.B) {
	c, req := benchServer(b)
	for _, conc := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			benchUnary(b, c, req, conc)
		})
	}
}

// BenchmarkEvaluateUnlimited is BenchmarkEvaluate at concurrency 16 with
// no limit on the evaluations running at once (MaxEvaluations -1): every
// call in flight shares the CPU with the others instead of waiting in
// line.
func BenchmarkEvaluateUnlimited(b *testing.B) {
	c, req := benchServerWith(b, server.Options{MaxEvaluations: -1})
	b.Run("concurrency=16", func(b *testing.B) { benchUnary(b, c, req, 16) })
}

// benchUnary makes b.N Evaluate calls, conc at a time, and reports their
// latency percentiles, the throughput and the CPU time per call.
func benchUnary(b *testing.B, c *client.Client, req *verdictv1.EvaluateRequest, conc int) {
	servertest.Concurrent(b, "Evaluate()", conc, func(ctx context.Context) error {
		_, err := c.Evaluate(ctx, req)
		return err
	})
}

// BenchmarkEvaluateStream measures Scan (EvaluateStream) throughput: b.N
// Pods in batches over one stream, in background mode as a scan sends
// them.
func BenchmarkEvaluateStream(b *testing.B) {
	c, req := benchServer(b)
	req = proto.CloneOf(req)
	req.Mode = verdictv1.Mode_MODE_BACKGROUND
	for _, batch := range []int{100, 500} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			items := func(yield func(client.Item) bool) {
				for i := range b.N {
					if !yield(client.Item{ID: fmt.Sprint(i), Request: req}) {
						return
					}
				}
			}
			results := 0
			b.ResetTimer()
			cpu0 := servertest.CPUTime(b)
			start := time.Now()
			err := c.Scan(context.Background(), iter.Seq[client.Item](items), func(r client.Result) error {
				results++
				return r.Err
			}, client.ScanOptions{BatchSize: batch})
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatalf("Scan() = %v", err)
			}
			if results != b.N {
				b.Fatalf("Scan() delivered %d results, want %d", results, b.N)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "resources/s")
			b.ReportMetric(float64((servertest.CPUTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkTransport measures the same calls against a server that answers
// at once without evaluating anything: the cost of gRPC and the client on
// this machine, to be subtracted from BenchmarkEvaluate.
func BenchmarkTransport(b *testing.B) {
	f := startFake(b, &fakeServer{evaluate: okResponse})
	c := dial(b, f.addr, client.Options{})
	pod := readBenchPod(b)
	req, err := client.NewRequest(pod)
	if err != nil {
		b.Fatal(err)
	}
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			benchUnary(b, c, req, conc)
		})
	}
}

// BenchmarkLoopbackEcho measures the floor of this machine under the
// other benchmarks: no gRPC, no HTTP/2, no evaluation; conc goroutines,
// each with its own loopback TCP connection, write the bytes of the Pod's
// Evaluate request and read a 64-byte answer that a server goroutine
// writes back at once. Its p99 at concurrency 16 bounds from below what
// any server answering over loopback can show in BenchmarkEvaluate here.
func BenchmarkLoopbackEcho(b *testing.B) {
	pod := readBenchPod(b)
	req, err := client.NewRequest(pod)
	if err != nil {
		b.Fatal(err)
	}
	msg, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	addr := startEcho(b, len(msg), 64)
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			conns := make(chan net.Conn, conc)
			for range conc {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close() })
				conns <- c
			}
			servertest.Concurrent(b, "echo", conc, func(context.Context) error {
				c := <-conns
				defer func() { conns <- c }()
				if _, err := c.Write(msg); err != nil {
					return err
				}
				var answer [64]byte
				_, err := io.ReadFull(c, answer[:])
				return err
			})
		})
	}
}

// startEcho serves loopback TCP connections that read requests of in
// bytes and answer each with out bytes, until the benchmark ends.
func startEcho(b *testing.B, in, out int) string {
	b.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("listen: %v", err)
	}
	b.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, answer := make([]byte, in), make([]byte, out)
				for {
					if _, err := io.ReadFull(c, req); err != nil {
						return
					}
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	return lis.Addr().String()
}
