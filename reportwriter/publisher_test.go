package reportwriter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
	"github.com/verdict-policy/verdict/reportwriter"
)

func dialPublisher(t *testing.T, addr string, opts publish.Options) *publish.Publisher {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	p, err := publish.New(conn, opts)
	if err != nil {
		t.Fatalf("publish.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return p
}

func pods(n, sec int) []*verdictv1.PublishItem {
	out := make([]*verdictv1.PublishItem, n)
	for i := range out {
		r := res{"v1", "Pod", fmt.Sprintf("ns-%d", i%5), fmt.Sprintf("pod-%d", i), fmt.Sprintf("uid-%d", i)}
		out[i] = evaluation(r, sec, []*verdictv1.RuleResult{
			rr(polLatest, "validate-image-tag", fail, "bad tag"),
			rr(polLatest, "require-image-tag", pass, "ok"),
		}, []pol{polLatest}, background)
	}
	return out
}

// summaries adds up the summaries of every final report.
func summaries(t *testing.T, c verdictv1.ReportServiceClient) reportwriter.Summary {
	t.Helper()
	list, err := c.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	if err != nil {
		t.Fatalf("ListReports: %v", err)
	}
	var s reportwriter.Summary
	for _, r := range list.GetReports() {
		s.Pass += int(r.GetSummary().GetPass())
		s.Fail += int(r.GetSummary().GetFail())
	}
	return s
}

// TestPublisherWriterRestart kills the writer in the middle of a stream
// and starts it again on the same file and address: the publisher sends
// the unacknowledged batches again and every result is in its report
// exactly once.
func TestPublisherWriterRestart(t *testing.T) {
	path := tempDB(t)
	e := startWriter(t, path, "127.0.0.1:0", reportwriter.Options{})
	reg := prometheus.NewRegistry()
	p := dialPublisher(t, e.addr, publish.Options{Window: 4, MaxBatchItems: 50, BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, Registry: reg})
	const n = 3000
	all := pods(n, 0)
	if err := p.Publish(t.Context(), all[:n/2]...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// Kill the writer once part of the first half is acknowledged.
	deadline := time.Now().Add(10 * time.Second)
	for metric(t, reg, "verdict_report_publisher_items_acknowledged_total") < 200 {
		if time.Now().After(deadline) {
			t.Fatal("no acknowledgement within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	e.stop()
	if err := p.Publish(t.Context(), all[n/2:]...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	e2 := startWriter(t, path, e.addr, reportwriter.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush after restart: %v", err)
	}
	if diff := cmp.Diff(reportwriter.Summary{Pass: n, Fail: n}, summaries(t, e2.client)); diff != "" {
		t.Errorf("summaries after restart mismatch (-want +got):\n%s", diff)
	}
	// Sending everything again changes nothing.
	if err := p.Publish(t.Context(), all...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if diff := cmp.Diff(reportwriter.Summary{Pass: n, Fail: n}, summaries(t, e2.client)); diff != "" {
		t.Errorf("summaries after resending everything mismatch (-want +got):\n%s", diff)
	}
	if got := metric(t, reg, "verdict_report_publisher_items_duplicate_total"); got < n {
		t.Errorf("duplicates after resending everything = %v, want at least %d", got, n)
	}
	if got := metric(t, reg, "verdict_report_publisher_reconnects_total"); got < 1 {
		t.Errorf("reconnects = %v, want at least 1", got)
	}
}

// metric returns the value of the counter or gauge name of reg (0 when
// absent).
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			if g := mf.GetMetric()[0].GetGauge(); g != nil {
				return g.GetValue()
			}
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestPublisherItems sends decision-server evaluations through the
// publisher as the items publish.Item builds: inline policies are not
// reported, a dry run changes nothing.
func TestPublisherItems(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	p := dialPublisher(t, e.addr, publish.Options{})
	resp := &verdictv1.EvaluateResponse{
		Allowed:  true,
		Results:  []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")},
		Policies: []*verdictv1.PolicyVersion{polLatest.version()},
	}
	evs := []publish.Evaluation{
		{Time: t0, Resource: publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web"}, Operation: "CREATE", Complete: true, Response: resp},
		{Time: t0, Resource: publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "inline"}, Operation: "CREATE", Inline: true, Response: resp},
		{Time: t0, Resource: publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "dry"}, Operation: "CREATE", DryRun: true, Response: resp},
	}
	for _, ev := range evs {
		if it := publish.Item(ev); it != nil {
			if err := p.Offer(it); err != nil {
				t.Fatalf("Offer: %v", err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	want := []row{{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", "fail", 0}}
	if diff := cmp.Diff(want, rows(t, e.client)); diff != "" {
		t.Errorf("reports mismatch (-want +got):\n%s", diff)
	}
}

// TestPublisherBufferFull checks that Offer drops and counts what does not
// fit the buffer while the writer is unreachable.
func TestPublisherBufferFull(t *testing.T) {
	tests := []struct {
		name          string
		items         int
		wantDropped   float64
		wantErrorFull bool
	}{
		{"at the limit", 2, 0, false},
		{"over the limit", 3, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			p := dialPublisher(t, "127.0.0.1:1", publish.Options{Buffer: 2, Registry: reg, BackoffMin: time.Hour})
			it := publish.Item(publish.Evaluation{Time: t0, Resource: publish.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web"}, Operation: "CREATE",
				Response: &verdictv1.EvaluateResponse{Allowed: true}})
			var items []*verdictv1.PublishItem
			for range tt.items {
				items = append(items, it)
			}
			err := p.Offer(items...)
			if got := errors.Is(err, publish.ErrFull); got != tt.wantErrorFull {
				t.Errorf("Offer(%d items, buffer 2) = %v, want ErrFull %v", tt.items, err, tt.wantErrorFull)
			}
			if got := metric(t, reg, "verdict_report_publisher_undelivered_total"); got != tt.wantDropped {
				t.Errorf("undelivered = %v, want %v", got, tt.wantDropped)
			}
		})
	}
}
