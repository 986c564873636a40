package scanner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/verdict-policy/verdict/internal/testing/testcorpus"
	"github.com/verdict-policy/verdict/scanner"
)

// benchPolicies reads the ClusterPolicy files below dir (hidden folders
// skipped; files holding one ClusterPolicy).
func benchPolicies(b *testing.B, dir string) []string {
	b.Helper()
	files, err := testcorpus.ClusterPolicies(dir)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, string(f.Data))
	}
	return out
}

// BenchmarkScanFiles scans a file of Pods (the engine benchmark's Pod, in
// 50 namespaces) against a decision server on loopback, and reports
// resources/s. The policies are the repository's examples, or the
// ClusterPolicies below $VERDICT_SCAN_BENCH_POLICIES.
func BenchmarkScanFiles(b *testing.B) {
	dir := os.Getenv("VERDICT_SCAN_BENCH_POLICIES")
	if dir == "" {
		dir = "../examples/policies"
	}
	policies := benchPolicies(b, dir)
	ts := startServer(b, policies...)
	pod, err := os.ReadFile("../engine/testdata/bench/pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	const pods = 2000
	var file bytes.Buffer
	for i := range pods {
		doc := strings.Replace(string(pod), "name: web\n  namespace: shop", fmt.Sprintf("name: web-%d\n  namespace: shop-%d", i, i%50), 1)
		file.WriteString(doc)
		file.WriteString("\n---\n")
	}
	src, err := scanner.NewFileSource(context.Background(), []string{writeFiles(b, map[string]string{"pods.yaml": file.String()})}, scanner.FileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if src.Len() != pods {
		b.Fatalf("read %d pods, want %d", src.Len(), pods)
	}
	for _, batch := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, err := scanner.New(ts.client, scanner.Options{BatchSize: batch})
			if err != nil {
				b.Fatal(err)
			}
			var results int
			b.ReportAllocs()
			for b.Loop() {
				sum, err := s.Scan(context.Background(), src, nil, scanner.ScanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if sum.Resources != pods || sum.Failed != 0 {
					b.Fatalf("scanned %d, %d failed", sum.Resources, sum.Failed)
				}
				c := sum.Counts
				results = c.Pass + c.Fail + c.Warn + c.Error + c.Skip
			}
			b.ReportMetric(float64(pods*b.N)/b.Elapsed().Seconds(), "resources/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pods*b.N), "ns/resource")
			b.Logf("%d policies, %d results per scan", len(policies), results)
		})
	}
}
