package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of ScanOptions.
const (
	DefaultBatchSize     = 100
	DefaultMaxInFlight   = 4
	DefaultLinger        = 5 * time.Millisecond
	DefaultMaxReconnects = 3
)

// ScanOptions configure Scan. The zero value is usable.
type ScanOptions struct {
	// BatchSize is the number of requests sent in one batch; it must not
	// exceed the server's batch limit (1000 by default). Default 100.
	BatchSize int
	// MaxInFlight is the number of batches sent and not answered yet.
	// When it is reached, Scan stops taking items from the iterator until
	// the next answer: a slow server or a slow result function slows the
	// producer down, and memory stays bounded by
	// BatchSize × MaxInFlight requests. Default 4.
	MaxInFlight int
	// Linger is how long a batch that is not full waits for more items
	// before it is sent. Default 5ms.
	Linger time.Duration
	// MaxReconnects is how many times in a row a stream that ends with
	// UNAVAILABLE (a server shutting down, a lost connection) is opened
	// again; the batches that got no answer are sent again on the new
	// stream, so such items may be evaluated twice by the servers, but
	// each result reaches the result function once. The count starts
	// over after every answer. Negative: never. Default 3.
	MaxReconnects int
}

func (o ScanOptions) withDefaults() ScanOptions {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Linger <= 0 {
		o.Linger = DefaultLinger
	}
	switch {
	case o.MaxReconnects == 0:
		o.MaxReconnects = DefaultMaxReconnects
	case o.MaxReconnects < 0:
		o.MaxReconnects = 0
	}
	return o
}

// Item is one request of a scan.
type Item struct {
	// ID is chosen by the caller and comes back in the Result; it is not
	// interpreted and need not be unique.
	ID      string
	Request *verdictv1.EvaluateRequest
}

// Result is the outcome of one Item.
type Result struct {
	ID string
	// Response is the decision; nil when Err is set. The results of one
	// batch share their PolicyVersion messages: treat them as read-only.
	Response *verdictv1.EvaluateResponse
	// Err is the status error Evaluate would have returned for the
	// request (FieldViolations reads its bad fields). A failed item does
	// not end the scan.
	Err error
}

// Scan evaluates every item of items through one EvaluateStream, in
// batches, and calls fn with the result of each item, in the order of
// items, from one goroutine.
//
// Flow control: at most MaxInFlight batches are unanswered at a time, so
// Scan pulls items from the iterator only as fast as the server answers
// and fn returns.
//
// Scan returns nil when every item has its result; fn's error, which ends
// the scan; ctx's error when ctx ends first; or the stream's error (a
// batch over the server's limit is RESOURCE_EXHAUSTED). items runs in a
// goroutine of its own and should stop when ctx is done: Scan waits for
// it before it returns.
func (c *Client) Scan(ctx context.Context, items iter.Seq[Item], fn func(Result) error, opts ScanOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	in := make(chan Item)
	wg.Go(func() {
		defer close(in)
		for it := range items {
			select {
			case in <- it:
			case <-ctx.Done():
				return
			}
		}
	})
	s := &scanner{c: c, opts: opts.withDefaults(), fn: fn, wg: &wg}
	return s.run(ctx, in)
}

// scanner is the state of one Scan, owned by the goroutine of run.
type scanner struct {
	c    *Client
	opts ScanOptions
	fn   func(Result) error
	wg   *sync.WaitGroup

	batch   []*verdictv1.EvaluateStreamItem // being filled
	pending [][]*verdictv1.EvaluateStreamItem
	stream  verdictv1.DecisionService_EvaluateStreamClient
	recv    chan recvMsg // answers of stream, then its error
	broken  bool         // a Send on stream failed; its error comes from recv
	retries int          // reconnects since the last answer
}

type recvMsg struct {
	resp *verdictv1.EvaluateStreamResponse
	err  error
}

func (s *scanner) run(ctx context.Context, in <-chan Item) error {
	var (
		inDone  bool
		linger  *time.Timer
		lingerC <-chan time.Time
		expired bool
	)
	stopLinger := func() {
		if linger != nil {
			linger.Stop()
		}
		lingerC, expired = nil, false
	}
	defer stopLinger()
	for {
		if inDone && len(s.batch) == 0 && len(s.pending) == 0 {
			return s.finish(ctx)
		}
		full := len(s.batch) >= s.opts.BatchSize
		if len(s.batch) > 0 && len(s.pending) < s.opts.MaxInFlight && (full || inDone || expired) {
			stopLinger()
			if err := s.send(ctx); err != nil {
				return err
			}
			continue
		}
		var inC <-chan Item
		if !inDone && !full {
			inC = in
		}
		select {
		case it, ok := <-inC:
			if !ok {
				inDone = true
				continue
			}
			s.batch = append(s.batch, &verdictv1.EvaluateStreamItem{Id: it.ID, Request: it.Request})
			if len(s.batch) == 1 {
				if linger == nil {
					linger = time.NewTimer(s.opts.Linger)
				} else {
					linger.Reset(s.opts.Linger)
				}
				lingerC = linger.C
			}
		case <-lingerC:
			lingerC, expired = nil, true
		case m := <-s.recv:
			if err := s.answer(ctx, m); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send sends the batch being filled, opening a stream first if there is
// none.
func (s *scanner) send(ctx context.Context) error {
	b := s.batch
	s.batch = make([]*verdictv1.EvaluateStreamItem, 0, s.opts.BatchSize)
	s.pending = append(s.pending, b)
	if s.stream == nil {
		return s.open(ctx)
	}
	return s.sendOn(b)
}

// sendOn sends one batch on the current stream. A broken stream is not an
// error here: its status arrives through recv.
func (s *scanner) sendOn(b []*verdictv1.EvaluateStreamItem) error {
	if s.broken {
		return nil
	}
	err := s.stream.Send(&verdictv1.EvaluateStreamRequest{Items: b, SharedPolicyVersions: true})
	if errors.Is(err, io.EOF) {
		s.broken = true
		return nil
	}
	return err
}

// open opens a stream and sends every pending batch on it.
func (s *scanner) open(ctx context.Context) error {
	st, err := s.c.api.EvaluateStream(ctx)
	if err != nil {
		return s.reconnect(ctx, err)
	}
	recv := make(chan recvMsg, s.opts.MaxInFlight+1)
	s.stream, s.recv, s.broken = st, recv, false
	// The receiver never blocks: it gets at most one answer per pending
	// batch, and then one error.
	s.wg.Go(func() {
		for {
			resp, err := st.Recv()
			recv <- recvMsg{resp: resp, err: err}
			if err != nil {
				return
			}
		}
	})
	for _, b := range s.pending {
		if err := s.sendOn(b); err != nil {
			return err
		}
	}
	return nil
}

// reconnect opens a new stream after err ended the last one, when err is
// UNAVAILABLE and reconnects are left; otherwise it returns err.
func (s *scanner) reconnect(ctx context.Context, err error) error {
	if status.Code(err) != codes.Unavailable || s.retries >= s.opts.MaxReconnects {
		return err
	}
	backoff := min(50*time.Millisecond<<s.retries, time.Second)
	s.retries++
	t := time.NewTimer(backoff)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.open(ctx)
}

// answer handles one message of the receiver: the answer to the oldest
// pending batch, or the end of the stream.
func (s *scanner) answer(ctx context.Context, m recvMsg) error {
	if m.err != nil {
		err := m.err
		if errors.Is(err, io.EOF) {
			err = status.Errorf(codes.Unavailable, "stream ended with %d batches unanswered", len(s.pending))
		}
		s.stream, s.recv = nil, nil
		return s.reconnect(ctx, err)
	}
	if len(s.pending) == 0 {
		return errors.New("EvaluateStream: an answer to no batch")
	}
	b := s.pending[0]
	results := m.resp.GetResults()
	if len(results) != len(b) {
		return fmt.Errorf("EvaluateStream: %d results for a batch of %d", len(results), len(b))
	}
	s.pending = s.pending[1:]
	s.retries = 0
	versions := m.resp.GetPolicies()
	for i, r := range results {
		if r.GetId() != b[i].GetId() {
			return fmt.Errorf("EvaluateStream: result %d has id %q, want %q", i, r.GetId(), b[i].GetId())
		}
		res := Result{ID: r.GetId()}
		switch o := r.GetOutcome().(type) {
		case *verdictv1.EvaluateStreamResult_Response:
			if err := restorePolicies(o.Response, versions); err != nil {
				return fmt.Errorf("EvaluateStream: result %d: %w", i, err)
			}
			res.Response = o.Response
		case *verdictv1.EvaluateStreamResult_Error:
			res.Err = itemStatus(o.Error)
		default:
			res.Err = status.Error(codes.Internal, "result without outcome")
		}
		if err := s.fn(res); err != nil {
			return err
		}
	}
	return nil
}

// restorePolicies gives r the policies its policy_indexes name in the
// versions of its batch (shared_policy_versions): the results of a batch
// share those messages.
func restorePolicies(r *verdictv1.EvaluateResponse, versions []*verdictv1.PolicyVersion) error {
	idx := r.GetPolicyIndexes()
	if len(idx) == 0 {
		return nil
	}
	ps := make([]*verdictv1.PolicyVersion, len(idx))
	for k, i := range idx {
		if int(i) >= len(versions) {
			return fmt.Errorf("policy_indexes[%d] is %d, but the batch has %d policy versions", k, i, len(versions))
		}
		ps[k] = versions[i]
	}
	r.Policies, r.PolicyIndexes = ps, nil
	return nil
}

// finish ends the stream once every batch is answered.
func (s *scanner) finish(ctx context.Context) error {
	if s.stream == nil {
		return nil
	}
	if err := s.stream.CloseSend(); err != nil {
		return nil // every result is in; the stream's end does not matter
	}
	select {
	case <-s.recv:
	case <-ctx.Done():
	}
	return nil
}
