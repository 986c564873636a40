package server

import (
	"sync"
	"time"

	"github.com/verdict-policy/verdict/publish"
)

// DropLogInterval is the least time between two logs of evaluations
// dropped because the queue to the report writer was full; each log
// counts the drops since the one before.
const DropLogInterval = 10 * time.Second

// report offers the item of an evaluation to the report writer's queue,
// without waiting. What the queue has no room for is counted
// (verdict_results_dropped_total) and logged, at most once per
// DropLogInterval.
func (s *Server) report(ev publish.Evaluation) {
	it := publish.Item(ev)
	if it == nil {
		return // nothing reports hold (inline policies, an unnamed object)
	}
	if err := s.opts.Reports.Offer(it); err != nil {
		s.metrics.resultsDrop.Inc()
		if n := s.dropLog.add(time.Now()); n > 0 {
			s.log.Warn("evaluations dropped for the report writer", "error", err, "dropped", n)
		}
		return
	}
	s.metrics.resultsQueued.Inc()
}

// dropLog counts drops between two logs.
type dropLog struct {
	mu      sync.Mutex
	last    time.Time
	pending int
}

// add counts one drop at now and returns the drops to log now (0: not
// yet).
func (d *dropLog) add(now time.Time) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending++
	if !d.last.IsZero() && now.Sub(d.last) < DropLogInterval {
		return 0
	}
	n := d.pending
	d.last, d.pending = now, 0
	return n
}
