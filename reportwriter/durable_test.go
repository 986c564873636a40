package reportwriter_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// deferredStore is a reportwriter.DeferredStore on a real store whose
// writes are durable only while the test lets them be (release).
type deferredStore struct {
	reportwriter.Store

	mu      sync.Mutex
	open    bool  // every write is durable
	err     error // the store fails
	changed chan struct{}
}

func newDeferredStore(s reportwriter.Store) *deferredStore {
	return &deferredStore{Store: s, changed: make(chan struct{})}
}

func (d *deferredStore) WaitDurable(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for !d.open && d.err == nil {
		ch := d.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			d.mu.Lock()
			return ctx.Err()
		}
		d.mu.Lock()
	}
	return d.err
}

// set makes the writes durable from now on (open), or holds them, or
// fails the waiters with err.
func (d *deferredStore) set(open bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.open, d.err = open, err
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *deferredStore) release() { d.set(true, nil) }
func (d *deferredStore) hold()    { d.set(false, nil) }

// pollMetric waits until the metric name of reg is want.
func pollMetric(t *testing.T, reg *prometheus.Registry, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for metric(t, reg, name) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, want %v within 10s", name, metric(t, reg, name), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAcksHeldUntilDurable sends batches on one stream to a writer on a
// deferred store: they are applied and written, several at once, and
// acknowledged, in order, only once the store made them durable.
func TestAcksHeldUntilDurable(t *testing.T) {
	var ds *deferredStore
	reg := prometheus.NewRegistry()
	e := startWrapped(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg, ReportInterval: 10 * time.Millisecond},
		func(s reportwriter.Store) reportwriter.Store { ds = newDeferredStore(s); return ds })
	st, err := e.client.Publish(t.Context())
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	const n = 5
	for i := range n {
		r := res{"v1", "Pod", "shop", fmt.Sprintf("pod-%d", i), fmt.Sprintf("uid-%d", i)}
		if err := st.Send(&verdictv1.PublishRequest{Sequence: uint64(i + 1), Items: items(evaluation(r, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}))}); err != nil {
			t.Fatalf("Send(batch %d): %v", i+1, err)
		}
	}
	acks := make(chan uint64, n)
	recvErr := make(chan error, 1)
	go func() {
		for {
			a, err := st.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			acks <- a.GetSequence()
		}
	}()
	// Every batch is applied and its reports written, none acknowledged.
	pollMetric(t, reg, "verdict_reports_held_batches", n)
	pollMetric(t, reg, "verdict_reports_final_reports", 1)
	select {
	case s := <-acks:
		t.Fatalf("batch %d acknowledged before the store made it durable", s)
	case err := <-recvErr:
		t.Fatalf("Recv: %v", err)
	default:
	}
	ds.release()
	var got []uint64
	for range n {
		select {
		case s := <-acks:
			got = append(got, s)
		case err := <-recvErr:
			t.Fatalf("Recv: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("acknowledgements after release = %v, want %d", got, n)
		}
	}
	if diff := cmp.Diff([]uint64{1, 2, 3, 4, 5}, got); diff != "" {
		t.Errorf("acknowledged batches (-want +got):\n%s", diff)
	}
	pollMetric(t, reg, "verdict_reports_held_batches", 0)

	// A batch that changes nothing waits too, on another stream: it may
	// be the resend of a batch not durable yet.
	ds.hold()
	podD := res{"v1", "Pod", "shop", "pod-d", "uid-d"}
	again := items(evaluation(podD, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}))
	if err := st.Send(&verdictv1.PublishRequest{Sequence: n + 1, Items: again}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	pollMetric(t, reg, "verdict_reports_held_batches", 1)
	pollMetric(t, reg, "verdict_reports_final_reports", 1)
	st2, err := e.client.Publish(t.Context())
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := st2.Send(&verdictv1.PublishRequest{Sequence: 1, Items: again}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	pollMetric(t, reg, "verdict_reports_duplicates_total", 1)
	pollMetric(t, reg, "verdict_reports_held_batches", 2)
	ds.release()
	if a, err := st2.Recv(); err != nil || a.GetDuplicates() != 1 {
		t.Errorf("acknowledgement of the batch sent again = %v, %v; want 1 duplicate", a, err)
	}
	select {
	case s := <-acks:
		if s != n+1 {
			t.Errorf("acknowledged batch %d, want %d", s, n+1)
		}
	case err := <-recvErr:
		t.Fatalf("Recv: %v", err)
	}

	// The store cannot make a batch durable: the stream ends UNAVAILABLE,
	// so that the sender sends it again.
	if err := st.Send(&verdictv1.PublishRequest{Sequence: n + 2, Items: items(evaluation(podC, 1, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}, []pol{polLatest}))}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ds.set(false, errors.New("api server down"))
	select {
	case s := <-acks:
		t.Errorf("batch %d acknowledged, want the stream to end", s)
	case err := <-recvErr:
		if status.Code(err) != codes.Unavailable {
			t.Errorf("Recv after a failed store = %v, want Unavailable", err)
		}
	}
}

// TestApplyHeldUntilDurable checks that Apply, in process, returns once
// the batch is durable.
func TestApplyHeldUntilDurable(t *testing.T) {
	var ds *deferredStore
	reg := prometheus.NewRegistry()
	e := startWrapped(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg, ReportInterval: 10 * time.Millisecond},
		func(s reportwriter.Store) reportwriter.Store { ds = newDeferredStore(s); return ds })
	done := make(chan error, 1)
	go func() {
		_, err := e.writer.Apply(context.Background(), items(evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest})))
		done <- err
	}()
	pollMetric(t, reg, "verdict_reports_held_batches", 1)
	pollMetric(t, reg, "verdict_reports_final_reports", 1)
	select {
	case err := <-done:
		t.Fatalf("Apply returned (%v) before the store made the batch durable", err)
	default:
	}
	ds.release()
	if err := <-done; err != nil {
		t.Errorf("Apply = %v, want nil", err)
	}
}
