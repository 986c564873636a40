package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// ResultSink receives the outcome of every evaluation, for the report
// writer. The server calls Write from one goroutine, with batches in the
// order evaluations finished. An error is logged and counted; the batch is
// not retried.
type ResultSink interface {
	Write(ctx context.Context, batch []Evaluation) error
}

// Evaluation is one evaluated request, as published to a ResultSink.
type Evaluation struct {
	// Time the evaluation finished.
	Time time.Time
	// Resource identifies the evaluated object (the old object for a
	// DELETE).
	Resource ResourceRef
	Mode     verdictv1.Mode
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
	// DryRun is the request's dry_run flag.
	DryRun bool
	// AllPolicies is true when every policy of the server was evaluated
	// (no policy selector, no inline policies).
	AllPolicies bool
	// Inline is true when the request carried its own policies.
	Inline bool
	// Response is the answer sent to the caller. Sinks must not modify
	// it.
	Response *verdictv1.EvaluateResponse
}

// ResourceRef identifies a Kubernetes object.
type ResourceRef struct {
	APIVersion, Kind, Namespace, Name, UID string
	// ResourceVersion is metadata.resourceVersion, when set.
	ResourceVersion string
}

// maxSinkBatch bounds the evaluations handed to one Write call.
const maxSinkBatch = 256

// publisher queues evaluations in a bounded buffer and hands them to a
// ResultSink from one goroutine. Publishing never blocks: when the buffer
// is full the evaluation is dropped and counted.
type publisher struct {
	sink    ResultSink
	queue   chan Evaluation
	metrics *metrics
	log     *slog.Logger
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// newPublisher returns a publisher, or nil for a nil sink (publishing to a
// nil publisher does nothing).
func newPublisher(sink ResultSink, size int, m *metrics, log *slog.Logger) *publisher {
	if sink == nil {
		return nil
	}
	p := &publisher{sink: sink, queue: make(chan Evaluation, size), metrics: m, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p
}

// publish queues ev without blocking.
func (p *publisher) publish(ev Evaluation) {
	if p == nil {
		return
	}
	select {
	case p.queue <- ev:
		p.metrics.resultsQueued.Inc()
	default:
		p.metrics.resultsDrop.Inc()
	}
}

func (p *publisher) loop() {
	defer close(p.done)
	batch := make([]Evaluation, 0, maxSinkBatch)
	for {
		select {
		case ev := <-p.queue:
			batch = append(batch[:0], ev)
		case <-p.stop:
			// Write what is queued, then stop.
			for {
				batch = p.fill(batch[:0])
				if len(batch) == 0 {
					return
				}
				p.write(batch)
			}
		}
		p.write(p.fill(batch))
	}
}

// fill adds queued evaluations to batch without waiting.
func (p *publisher) fill(batch []Evaluation) []Evaluation {
	for len(batch) < maxSinkBatch {
		select {
		case ev := <-p.queue:
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

func (p *publisher) write(batch []Evaluation) {
	if err := p.sink.Write(context.Background(), batch); err != nil {
		p.metrics.sinkErrors.Inc()
		p.log.Error("result sink", "error", err, "evaluations", len(batch))
	}
}

// close writes the queued evaluations and stops, waiting until done or ctx
// is done. Evaluations published after close are not written.
func (p *publisher) close(ctx context.Context) {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	select {
	case <-p.done:
	case <-ctx.Done():
	}
}
