package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/pflag"
)

// defaultGCPercent is the garbage collector's target of the long-running
// commands. A decision server keeps little live data (compiled policies)
// and allocates a lot per request; collecting when the heap has grown by
// 400% instead of Go's 100% cut CPU per evaluation by 20–35% in the
// decision server benchmarks (docs/benchmarks.md). Bound the heap with
// GOMEMLIMIT (the deploy manifests set it from the container's memory
// limit): near the limit the collector runs sooner whatever this target.
const defaultGCPercent = 400

// batchGCPercent is the collector's target of `verdict apply`: its live
// heap is small (the compiled policies, a window of resources, 256 KiB of
// each spooled output), so Go's 100% collects often; 150% cut its CPU by
// 10% (`verdict apply` of the 30 benchmark policies to 2,000 resources,
// docs/benchmarks.md) for 2–3 MiB more peak.
const batchGCPercent = 150

// registerGCFlag adds --gc-percent to a command, with def as its default.
func registerGCFlag(fs *pflag.FlagSet, p *int, def int) {
	fs.IntVar(p, "gc-percent", def, "garbage collector target percentage, as GOGC (0: the Go default); the GOGC environment variable, when set, wins")
}

// applyGCPercent sets the collector's target unless GOGC is set or p is 0.
// It returns the target in effect.
func applyGCPercent(p int) int {
	if os.Getenv("GOGC") != "" || p == 0 {
		prev := debug.SetGCPercent(100)
		debug.SetGCPercent(prev)
		return prev
	}
	debug.SetGCPercent(p)
	return p
}
