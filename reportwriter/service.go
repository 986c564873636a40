package reportwriter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// ServiceName is the gRPC name of the report service.
var ServiceName = verdictv1.ReportService_ServiceDesc.ServiceName

// Publish implements verdictv1.ReportServiceServer: it applies the batches
// of a stream in order and acknowledges each once durable. A reader
// goroutine receives ahead, and an acknowledging goroutine sends the
// acknowledgements in order as the batches become durable, so that a
// stream has many batches in flight while acknowledgements are held (see
// DeferredStore); the batches received and not acknowledged count as
// unacknowledged.
func (w *Writer) Publish(stream verdictv1.ReportService_PublishServer) error {
	w.metrics.streams.Inc()
	defer w.metrics.streams.Dec()
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	// A limit exceeded while a batch is being queued ends the stream at
	// once: fatal holds the status, applyCtx cancels the batch in progress.
	applyCtx, cancelApply := context.WithCancel(ctx)
	defer cancelApply()
	var fatal atomic.Pointer[error]
	var unacked atomic.Int64
	// The bytes of the batches received and not acknowledged count
	// against MaxInflightBytes, over every stream: the reader waits for
	// room (and gRPC's flow control holds the sender).
	budget := &ledger{sem: w.inflight, gauge: w.metrics.inflightBytes}
	defer budget.close()
	type received struct {
		req  *verdictv1.PublishRequest
		size int64
	}
	batches := make(chan received, w.opts.MaxUnacked)
	recvErr := make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			size, err := w.checkBatch(req, unacked.Add(1))
			if err != nil {
				fatal.Store(&err)
				cancelApply()
				recvErr <- err
				return
			}
			if err := budget.acquire(ctx, size); err != nil {
				return // the stream ends
			}
			select {
			case batches <- received{req, size}:
			case <-ctx.Done():
				return
			}
		}
	}()

	type inflight struct {
		seq  uint64
		size int64
		done <-chan Result
	}
	waiting := make(chan inflight, w.opts.MaxUnacked)
	ackErr := make(chan error, 1)
	fail := func(err error) { // the first error ends the stream
		select {
		case ackErr <- err:
		default:
		}
	}
	ackDone := make(chan struct{})
	go func() {
		defer close(ackDone)
		for {
			var f inflight
			var ok bool
			select {
			case f, ok = <-waiting:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
			var res Result
			select {
			case res = <-f.done:
			case <-ctx.Done():
				return
			}
			if res.Err != nil {
				fail(status.Errorf(codes.Unavailable, "batch %d: %v", f.seq, res.Err))
				return
			}
			ack := &verdictv1.PublishResponse{Sequence: f.seq, Rejected: res.Rejected, Duplicates: uint32(res.Duplicates)}
			// A sender that does not read its acknowledgements blocks
			// Send (flow control) and holds the in-flight bytes of its
			// batches: its stream ends after AckTimeout.
			timer := time.AfterFunc(w.opts.AckTimeout, func() {
				w.metrics.exhausted.WithLabelValues("ack_timeout").Inc()
				fail(status.Errorf(codes.DeadlineExceeded, "batch %d: acknowledgement not taken by the sender within %s (ack timeout)", f.seq, w.opts.AckTimeout))
			})
			err := stream.Send(ack)
			timer.Stop()
			if err != nil {
				fail(err)
				return
			}
			unacked.Add(-1)
			budget.release(f.size)
		}
	}()
	// No acknowledgement is sent after Publish returns.
	defer func() { cancel(); <-ackDone }()
	unavailable := status.Error(codes.Unavailable, "report writer shutting down")

	for {
		select {
		case <-w.draining:
			return unavailable
		default:
		}
		var rcv received
		select {
		case rcv = <-batches:
		case err := <-recvErr:
			// Batches received before the error are still applied.
			select {
			case rcv = <-batches:
				recvErr <- err
			default:
				if !errors.Is(err, io.EOF) && status.Code(err) != codes.Canceled {
					return err
				}
				// The sender is done: acknowledge what it sent.
				close(waiting)
				select {
				case <-ackDone:
				case err := <-ackErr:
					return err
				case <-w.draining:
					return unavailable
				}
				select {
				case err := <-ackErr:
					return err
				default:
					return nil
				}
			}
		case err := <-ackErr:
			return err
		case <-w.draining:
			return unavailable
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
		req := rcv.req
		done, err := w.submit(applyCtx, req.GetItems())
		if f := fatal.Load(); f != nil {
			return *f
		}
		if err != nil {
			if errors.Is(err, ErrClosed) {
				return unavailable
			}
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			return status.Errorf(codes.Unavailable, "batch %d: %v", req.GetSequence(), err)
		}
		select {
		case waiting <- inflight{seq: req.GetSequence(), size: rcv.size, done: done}:
		case err := <-ackErr:
			return err
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// checkBatch enforces the stream limits on a received batch; n is the
// number of unacknowledged batches including it. It returns the batch's
// size.
func (w *Writer) checkBatch(req *verdictv1.PublishRequest, n int64) (int64, error) {
	o := w.opts
	switch {
	case n > int64(o.MaxUnacked):
		w.metrics.exhausted.WithLabelValues("max_unacked").Inc()
		return 0, status.Errorf(codes.ResourceExhausted, "batch %d: more than %d unacknowledged batches (max unacknowledged batches per stream)", req.GetSequence(), o.MaxUnacked)
	case len(req.GetItems()) > o.MaxBatchItems:
		w.metrics.exhausted.WithLabelValues("max_batch_items").Inc()
		return 0, status.Errorf(codes.ResourceExhausted, "batch %d: %d items, more than the max batch size %d", req.GetSequence(), len(req.GetItems()), o.MaxBatchItems)
	case req.GetSequence() == 0:
		return 0, status.Error(codes.InvalidArgument, "sequence: required (not 0)")
	}
	size := proto.Size(req)
	if size > o.MaxMessageBytes {
		w.metrics.exhausted.WithLabelValues("max_message_bytes").Inc()
		return 0, status.Errorf(codes.ResourceExhausted, "batch %d: %d bytes, more than the max message size %d bytes", req.GetSequence(), size, o.MaxMessageBytes)
	}
	return int64(size), nil
}

// ledger counts the bytes one stream holds of the writer's
// MaxInflightBytes: acquired when a batch is received, released when it
// is acknowledged, and all at once when the stream ends (close; after it,
// acquire fails and release does nothing).
type ledger struct {
	sem   *semaphore.Weighted
	gauge prometheus.Gauge
	mu    sync.Mutex
	held  int64
	done  bool
}

func (l *ledger) acquire(ctx context.Context, n int64) error {
	if err := l.sem.Acquire(ctx, n); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		l.sem.Release(n)
		return ErrClosed
	}
	l.held += n
	l.gauge.Add(float64(n))
	return nil
}

func (l *ledger) release(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.held -= n
	l.gauge.Sub(float64(n))
	l.sem.Release(n)
}

func (l *ledger) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	l.gauge.Sub(float64(l.held))
	l.sem.Release(l.held)
	l.held = 0
}

// ListReports implements verdictv1.ReportServiceServer.
// Reads see every batch acknowledged before them: the changed reports are
// written first.
func (w *Writer) ListReports(ctx context.Context, req *verdictv1.ListReportsRequest) (*verdictv1.ListReportsResponse, error) {
	switch req.GetKind() {
	case "", KindPolicyReport, KindClusterPolicyReport:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "kind: %q: want PolicyReport or ClusterPolicyReport", req.GetKind())
	}
	if err := w.syncRead(ctx); err != nil {
		return nil, err
	}
	kind := req.GetKind()
	if req.GetNamespace() != "" && kind == "" {
		kind = KindPolicyReport
	}
	resp := &verdictv1.ListReportsResponse{}
	for _, sr := range w.Reports(kind, req.GetNamespace()) {
		resp.Reports = append(resp.Reports, reportInfo(sr))
	}
	return resp, nil
}

// GetReport implements verdictv1.ReportServiceServer.
func (w *Writer) GetReport(ctx context.Context, req *verdictv1.GetReportRequest) (*verdictv1.GetReportResponse, error) {
	switch {
	case req.GetKind() != KindPolicyReport && req.GetKind() != KindClusterPolicyReport:
		return nil, status.Errorf(codes.InvalidArgument, "kind: %q: want PolicyReport or ClusterPolicyReport", req.GetKind())
	case req.GetName() == "":
		return nil, status.Error(codes.InvalidArgument, "name: required")
	case req.GetKind() == KindPolicyReport && req.GetNamespace() == "":
		return nil, status.Error(codes.InvalidArgument, "namespace: required for a PolicyReport")
	case req.GetKind() == KindClusterPolicyReport && req.GetNamespace() != "":
		return nil, status.Error(codes.InvalidArgument, "namespace: must be empty for a ClusterPolicyReport")
	}
	if err := w.syncRead(ctx); err != nil {
		return nil, err
	}
	sr, err := w.Report(ctx, ReportKey{Namespace: req.GetNamespace(), Name: req.GetName()})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "read %s %q: %v", req.GetKind(), name(req.GetNamespace(), req.GetName()), err)
	}
	if sr == nil {
		return nil, status.Error(codes.NotFound, fmt.Sprintf("%s %q not found", req.GetKind(), name(req.GetNamespace(), req.GetName())))
	}
	return &verdictv1.GetReportResponse{Info: reportInfo(sr), Report: sr.Report}, nil
}

// syncRead writes the changed reports before a read.
func (w *Writer) syncRead(ctx context.Context) error {
	switch err := w.Sync(ctx); {
	case err == nil:
		return nil
	case errors.Is(err, ErrClosed):
		return status.Error(codes.Unavailable, "report writer shutting down")
	default:
		return status.FromContextError(err).Err()
	}
}

func name(namespace, n string) string {
	if namespace == "" {
		return n
	}
	return namespace + "/" + n
}

func reportInfo(sr *StoredReport) *verdictv1.ReportInfo {
	return &verdictv1.ReportInfo{
		Kind:      sr.Key.Kind(),
		Namespace: sr.Key.Namespace,
		Name:      sr.Key.Name,
		Policy:    sr.Policy,
		Summary: &verdictv1.ReportSummary{
			Pass:  int32(sr.Summary.Pass),
			Fail:  int32(sr.Summary.Fail),
			Warn:  int32(sr.Summary.Warn),
			Error: int32(sr.Summary.Error),
			Skip:  int32(sr.Summary.Skip),
		},
		Created: timestamppb.New(sr.Created),
		Updated: timestamppb.New(sr.Updated),
	}
}
