//go:build unix

package servertest

import (
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
