package publish_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
)

// flakyApplier records the names of the resources it applies; its first
// fail calls fail.
type flakyApplier struct {
	mu      sync.Mutex
	fail    int
	applied []string
	calls   int
}

func (a *flakyApplier) Apply(_ context.Context, items []*verdictv1.PublishItem) (publish.ApplyResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	if a.calls <= a.fail {
		return publish.ApplyResult{}, errors.New("store unavailable")
	}
	for _, it := range items {
		a.applied = append(a.applied, it.GetEvaluation().GetResource().GetName())
	}
	return publish.ApplyResult{}, nil
}

func podItems(n int) ([]*verdictv1.PublishItem, []string) {
	var items []*verdictv1.PublishItem
	var names []string
	for i := range n {
		r := pod
		r.Name = fmt.Sprintf("p%d", i)
		items = append(items, publish.Item(publish.Evaluation{Resource: r, Operation: "CREATE", Time: t0, Response: &verdictv1.EvaluateResponse{Allowed: true}}))
		names = append(names, r.Name)
	}
	return items, names
}

// TestLocal applies batches in order, and the batch of a failed Apply
// again, until it is applied.
func TestLocal(t *testing.T) {
	a := &flakyApplier{fail: 2}
	reg := prometheus.NewRegistry()
	p, err := publish.NewLocal(a, publish.Options{MaxBatchItems: 3, BackoffMin: time.Millisecond, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	items, want := podItems(7)
	if err := p.Publish(t.Context(), items...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if diff := cmp.Diff(want, a.applied); diff != "" {
		t.Errorf("applied mismatch (-want +got):\n%s", diff)
	}
	tests := []struct {
		metric string
		want   float64
	}{
		{"verdict_report_publisher_items_queued_total", 7},
		{"verdict_report_publisher_items_acknowledged_total", 7},
		{"verdict_report_publisher_batches_sent_total", 5}, // 3 batches, the first one 3 times
		{"verdict_report_publisher_batches_resent_total", 2},
		{"verdict_report_publisher_undelivered_total", 0},
	}
	for _, tt := range tests {
		if got := metricValue(t, reg, tt.metric); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.metric, got, tt.want)
		}
	}
}

// TestLocalCloseCountsUndelivered closes a publisher whose writer fails
// every batch: what it holds is counted as undelivered and returned as an
// error.
func TestLocalCloseCountsUndelivered(t *testing.T) {
	a := &flakyApplier{fail: 1 << 30}
	reg := prometheus.NewRegistry()
	p, err := publish.NewLocal(a, publish.Options{MaxBatchItems: 2, BackoffMin: time.Millisecond, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := podItems(5)
	if err := p.Offer(items...); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); err == nil {
		t.Errorf("Close with 5 items not applied = nil, want an error")
	}
	if got := metricValue(t, reg, "verdict_report_publisher_undelivered_total"); got != 5 {
		t.Errorf("undelivered = %v, want 5", got)
	}
	if err := p.Offer(items[0]); !errors.Is(err, publish.ErrClosed) {
		t.Errorf("Offer after Close = %v, want ErrClosed", err)
	}
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			var sum float64
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	return 0
}
