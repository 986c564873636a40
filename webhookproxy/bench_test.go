//go:build unix

package webhookproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/internal/testing/servertest"
	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// benchPolicies returns the pod-security policies of the corpus (one
// ClusterPolicy per policy file, test folders starting with a dot
// skipped), or the repository's example policies when the corpus is
// absent, and what they are.
func benchPolicies(b *testing.B) ([]string, string) {
	b.Helper()
	var out []string
	if dir, ok := testcorpus.Corpus("pod-security"); ok {
		files, err := testcorpus.ClusterPolicies(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			out = append(out, string(f.Data))
		}
		return out, fmt.Sprintf("%d pod-security policies of the corpus", len(out))
	}
	files, _ := filepath.Glob("../examples/policies/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, string(data))
	}
	if len(out) == 0 {
		b.Skip("neither the corpus nor the example policies are present")
	}
	return out, fmt.Sprintf("%d example policies (corpus absent)", len(out))
}

// benchReview is the AdmissionReview of a CREATE of the engine
// benchmark's Pod, as the API server sends it.
func benchReview(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile("../engine/testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	pod, err := yaml.YAMLToJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	return []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{` +
		`"uid":"705ab4f5-6393-11e8-b7cc-42010a800002",` +
		`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},` +
		`"requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1","resource":"pods"},` +
		`"name":"web","namespace":"shop","operation":"CREATE",` +
		`"userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller","uid":"3c5f6f4e-2c5c-4b8e-9d5e-1f2f0e6c6d0a","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},` +
		`"object":` + string(pod) + `,"oldObject":null,"dryRun":false,` +
		`"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}`)
}

// benchSetup starts a decision server with the benchmark policies and a
// proxy of it on loopback HTTPS, and returns the client of each.
func benchSetup(b *testing.B) (*client.Client, *proxy, []byte) {
	b.Helper()
	// The collector's target of verdict serve (--gc-percent 400), unless
	// GOGC is set; server and proxy share this process.
	if os.Getenv("GOGC") == "" {
		prev := debug.SetGCPercent(400)
		b.Cleanup(func() { debug.SetGCPercent(prev) })
	}
	policies, what := benchPolicies(b)
	c := startDecisionServerWith(b, server.Options{}, policies...)
	p := startProxy(b, c, webhookproxy.Options{}, nil, nil)
	p.client = http2Client(b, p)
	body := benchReview(b)
	code, resp, raw := p.post(b, "/validate", string(body))
	if code != http.StatusOK {
		b.Fatalf("POST /validate = %d %s", code, raw)
	}
	b.Logf("%s; the Pod is allowed: %v", what, responseOf(resp)["allowed"])
	return c, p, body
}

// http2Client is a client of p over HTTP/2 (one connection, multiplexed,
// as the API server calls webhooks).
func http2Client(b *testing.B, p *proxy) *http.Client {
	b.Helper()
	base := p.client.Transport.(*http.Transport)
	tr := &http.Transport{TLSClientConfig: base.TLSClientConfig.Clone(), ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 512}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// postReview sends one review and reads the answer.
func postReview(ctx context.Context, p *proxy, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/validate", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// BenchmarkProxyAddedLatency measures what the proxy adds to a decision:
// one caller alternates a direct gRPC Evaluate of the Pod with an HTTPS
// AdmissionReview of the same Pod through the proxy (which makes the same
// Evaluate call), and reports the percentiles of both and their
// difference.
func BenchmarkProxyAddedLatency(b *testing.B) {
	c, p, body := benchSetup(b)
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &ar); err != nil {
		b.Fatal(err)
	}
	req, err := webhookproxy.RequestFromAdmission(ar.Request, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	direct := make([]time.Duration, 0, b.N)
	proxied := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Evaluate(ctx, req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := postReview(ctx, p, body); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, t1.Sub(t0))
		proxied = append(proxied, time.Since(t1))
	}
	b.StopTimer()
	slices.Sort(direct)
	slices.Sort(proxied)
	for _, q := range []int{50, 99} {
		d, pr := servertest.Percentile(direct, q), servertest.Percentile(proxied, q)
		b.ReportMetric(us(d), fmt.Sprintf("direct-p%d-µs", q))
		b.ReportMetric(us(pr), fmt.Sprintf("proxy-p%d-µs", q))
		b.ReportMetric(us(pr-d), fmt.Sprintf("added-p%d-µs", q))
	}
}

// BenchmarkAdmissionReview measures end-to-end AdmissionReviews through
// the proxy and the decision server over loopback HTTPS (HTTP/2) and gRPC
// at several concurrencies: throughput, latency percentiles and CPU per
// review (proxy and server together).
func BenchmarkAdmissionReview(b *testing.B) {
	_, p, body := benchSetup(b)
	for _, conc := range []int{16, 500} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			// Warm up: open the connections conc callers need (the API
			// server keeps its webhook connections too), so that TLS
			// handshakes are not measured.
			var warm sync.WaitGroup
			var warmErr atomic.Pointer[error]
			for range conc {
				warm.Go(func() {
					if err := postReview(b.Context(), p, body); err != nil {
						warmErr.Store(&err)
					}
				})
			}
			warm.Wait()
			if err := warmErr.Load(); err != nil {
				b.Fatalf("POST /validate = %v", *err)
			}
			servertest.Concurrent(b, "POST /validate", conc, func(ctx context.Context) error {
				return postReview(ctx, p, body)
			})
		})
	}
}

// cannedDecider answers every request with the same response, at once.
type cannedDecider struct{ resp *verdictv1.EvaluateResponse }

func (d cannedDecider) Evaluate(context.Context, *verdictv1.EvaluateRequest, ...grpc.CallOption) (*verdictv1.EvaluateResponse, error) {
	return d.resp, nil
}

// BenchmarkHandler measures the proxy's own work on one review, without
// network or decision server: reading and decoding the AdmissionReview,
// building the EvaluateRequest, building and encoding the answer (the
// canned decision carries two warnings, as an Audit policy gives).
func BenchmarkHandler(b *testing.B) {
	body := benchReview(b)
	h, err := webhookproxy.New(cannedDecider{&verdictv1.EvaluateResponse{Allowed: true, Warnings: []string{
		"policy disallow-host-path.host-path: validation error: HostPath volumes are forbidden. rule host-path failed at path /spec/volumes/0/hostPath/",
		"policy require-requests-limits.validate-resources: validation error: CPU and memory resource requests and limits are required.",
	}}}, webhookproxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkAdmissionReviewOpenLoop: 500 API-server clients, each sending
// reviews at its own pace so that together they arrive at a fixed rate
// (exponential gaps: Poisson arrivals), as admission traffic does, instead
// of the closed loop of BenchmarkAdmissionReview where every client sends
// its next review the moment the last one is answered. b.N reviews are
// sent; the latency counts from each review's scheduled time, so a review
// that waits for a busy client is charged for the wait.
func BenchmarkAdmissionReviewOpenLoop(b *testing.B) {
	_, p, body := benchSetup(b)
	const clients = 500
	for _, rate := range []int{500, 1000, 2000} {
		b.Run(fmt.Sprintf("clients=%d/rate=%d", clients, rate), func(b *testing.B) {
			ctx := b.Context()
			var failed atomic.Pointer[error]
			var warm sync.WaitGroup
			for range clients {
				warm.Go(func() {
					if err := postReview(ctx, p, body); err != nil {
						failed.Store(&err)
					}
				})
			}
			warm.Wait()
			// Each client's mean gap between reviews.
			gap := time.Duration(float64(time.Second) * clients / float64(rate))
			per := (b.N + clients - 1) / clients
			lat := make([]time.Duration, 0, per*clients)
			var mu sync.Mutex
			var inflight, maxInflight atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for c := range clients {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 1))
					due := start.Add(time.Duration(rng.ExpFloat64() * float64(gap)))
					mine := make([]time.Duration, 0, per)
					for range per {
						time.Sleep(time.Until(due))
						n := inflight.Add(1)
						for m := maxInflight.Load(); n > m && !maxInflight.CompareAndSwap(m, n); m = maxInflight.Load() {
						}
						err := postReview(ctx, p, body)
						inflight.Add(-1)
						mine = append(mine, time.Since(due))
						if err != nil {
							failed.Store(&err)
							break
						}
						due = due.Add(time.Duration(rng.ExpFloat64() * float64(gap)))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatalf("POST /validate = %v", *err)
			}
			slices.Sort(lat)
			b.ReportMetric(us(servertest.Percentile(lat, 50)), "p50-µs")
			b.ReportMetric(us(servertest.Percentile(lat, 99)), "p99-µs")
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(maxInflight.Load()), "max-in-flight")
		})
	}
}
