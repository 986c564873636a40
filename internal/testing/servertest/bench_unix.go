//go:build unix

package servertest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the process's user + system CPU time so far: benchmarks
// report CPU per call from the difference, which other work on the machine
// disturbs less than wall time.
func CPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Concurrent makes b.N calls, conc at a time, and reports the latency
// percentiles of the calls (p50-µs, p99-µs), the throughput (req/s) and
// the process's CPU time per call (cpu-µs/op). A failed call fails the
// benchmark with what's name.
func Concurrent(b *testing.B, what string, conc int, call func(context.Context) error) {
	b.Helper()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	ctx := b.Context()
	b.ResetTimer()
	cpu0 := CPUTime(b)
	start := time.Now()
	for range min(conc, b.N) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(lat) {
					return
				}
				t0 := time.Now()
				err := call(ctx)
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Store(&err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatalf("%s = %v", what, *err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(Percentile(lat, 50).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(Percentile(lat, 99).Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64((CPUTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
