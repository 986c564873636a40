package reportwriter_test

import (
	"context"
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

func TestShardAddresses(t *testing.T) {
	tests := []struct {
		template string
		n        int
		want     []string
		wantErr  bool
	}{
		{"writer:50052", 1, []string{"writer:50052"}, false},
		{"verdict-reports-{shard}.verdict-reports.verdict.svc:50052", 3, []string{
			"verdict-reports-0.verdict-reports.verdict.svc:50052",
			"verdict-reports-1.verdict-reports.verdict.svc:50052",
			"verdict-reports-2.verdict-reports.verdict.svc:50052",
		}, false},
		{"writer-{shard}:50052", 1, []string{"writer-0:50052"}, false},
		{"writer:50052", 2, nil, true},
		{"writer-{shard}:50052", 0, nil, true},
	}
	for _, tt := range tests {
		got, err := publish.ShardAddresses(tt.template, tt.n)
		if (err != nil) != tt.wantErr {
			t.Errorf("ShardAddresses(%q, %d) error = %v, want error %v", tt.template, tt.n, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ShardAddresses(%q, %d) (-want +got):\n%s", tt.template, tt.n, diff)
		}
	}
}

// TestShardedPublisher publishes to the writers of two shards, each a real
// writer behind a gRPC server: every evaluation reaches the writer of its
// namespace's shard only, a policy set reaches both, and a scan end of a
// scan sharded like the writers reaches its shard's writer only.
func TestShardedPublisher(t *testing.T) {
	var envs []*env
	var conns []grpc.ClientConnInterface
	for range 2 {
		e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
		envs = append(envs, e)
		c, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	reg := prometheus.NewRegistry()
	p, err := publish.NewSharded(conns, publish.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	var items []*verdictv1.PublishItem
	want := [2]map[string]bool{{}, {}}
	for i := range 20 {
		ns := fmt.Sprintf("ns-%d", i)
		r := res{"v1", "Pod", ns, "web", fmt.Sprintf("uid-%d", i)}
		items = append(items, evaluation(r, 1, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")}, []pol{polLatest}))
		want[reportwriter.ShardOf(ns, 2)][ns] = true
	}
	items = append(items, policySet(2, polRules{polLatest, []string{"validate-image-tag"}}))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Publish(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i, e := range envs {
		if err := e.writer.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, sr := range e.writer.Reports("", "") {
			got[sr.Key.Namespace] = true
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("namespaces of the reports of shard %d (-want +got):\n%s", i, diff)
		}
	}
	// Each shard's publisher counts with its shard label.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	shards := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "verdict_report_publisher_items_acknowledged_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "shard" && m.GetCounter().GetValue() > 0 {
					shards[l.GetValue()] = true
				}
			}
		}
	}
	if diff := cmp.Diff(map[string]bool{"0": true, "1": true}, shards); diff != "" {
		t.Errorf("shards with acknowledged items (-want +got):\n%s", diff)
	}
}
