package reportwriter_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// senderSet is the policy set of sender at second sec.
func senderSet(sender string, sec int, ps ...polRules) *verdictv1.PublishItem {
	it := policySet(sec, ps...)
	it.GetPolicySet().Sender = sender
	return it
}

// stopping is the last set of a sender that stops.
func stopping(sender string, sec int) *verdictv1.PublishItem {
	it := senderSet(sender, sec)
	it.GetPolicySet().Stopping = true
	return it
}

// TestPolicySenders pins the reconciliation rule of several decision
// servers (doc.go): a policy's entries go when no live sender lists it,
// once every live sender's set is newer than them.
func TestPolicySenders(t *testing.T) {
	both := []polRules{{polLatest, []string{"validate-image-tag"}}, {polTeam, []string{"check-team"}}}
	team := polRules{polTeam, []string{"check-team"}}
	rowL := func(res string, sec int64) row {
		return row{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/" + res, "fail", sec}
	}
	rowT := row{"shop/cpol-require-team-label", "require-team-label", "check-team", "Pod/web", "fail", 0}
	tests := []struct {
		name string
		give [][]*verdictv1.PublishItem
		want []row
	}{
		{"one sender drops a policy: its entries go", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, team)},
		}, []row{rowT}},
		{"another sender still lists it: it stays", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, both...)}, {senderSet("b", 4, team)},
		}, []row{rowL("web", 0), rowT}},
		{"the sender that listed it stops: it goes", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, both...)}, {senderSet("b", 4, team)}, {stopping("a", 5)},
		}, []row{rowT}},
		{"the only sender stops: nothing goes", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, both...)}, {stopping("a", 5)},
		}, []row{rowL("web", 0), rowT}},
		{"restart with another folder: the new sender's set removes it", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, both...)}, {stopping("a", 5)}, {senderSet("b", 6, team)},
		}, []row{rowT}},
		{"an older set of a sender changes nothing", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, both...)}, {senderSet("a", 2, team)},
		}, []row{rowL("web", 0), rowT}},
		{"evaluation newer than the sets: kept until every live sender's set is newer", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, team), senderSet("b", 3, team)},
			{evaluation(podB, 5, failL, []pol{polLatest})},
			{senderSet("a", 7, team)},
		}, []row{rowL("debug", 5), rowT}},
		{"then the last live sender's newer set removes it", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, team), senderSet("b", 3, team)},
			{evaluation(podB, 5, failL, []pol{polLatest})},
			{senderSet("a", 7, team)},
			{senderSet("b", 8, team)},
		}, []row{rowT}},
		{"evaluation older than every set, of a policy no sender lists: ignored", [][]*verdictv1.PublishItem{
			{senderSet("a", 3, team), senderSet("b", 4, team)},
			{evaluation(podB, 2, failL, []pol{polLatest})},
		}, []row{rowT}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
			give := append([][]*verdictv1.PublishItem{{evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam})}}, tt.give...)
			sendBatches(t, e.client, give...)
			if diff := cmp.Diff(tt.want, rows(t, e.client), sortRows, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reports after %s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestPolicySenderTTL lets a sender's set grow older than the sender TTL:
// its policies no longer count, and the next set of a live sender removes
// the entries only it listed.
func TestPolicySenderTTL(t *testing.T) {
	var now atomic.Pointer[time.Time]
	start := t0.Add(time.Hour)
	now.Store(&start)
	clock := func() time.Time { return *now.Load() }
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Now: clock, PolicySenderTTL: 5 * time.Minute})
	both := []polRules{{polLatest, []string{"validate-image-tag"}}, {polTeam, []string{"check-team"}}}
	team := polRules{polTeam, []string{"check-team"}}
	sendBatches(t, e.client,
		items(evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam})),
		items(senderSet("a", 3, both...), senderSet("b", 4, team)),
	)
	rowT := row{"shop/cpol-require-team-label", "require-team-label", "check-team", "Pod/web", "fail", 0}
	rowL := row{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", "fail", 0}
	// At the TTL minus a second, a stays live.
	later := start.Add(5*time.Minute - time.Second)
	now.Store(&later)
	sendBatches(t, e.client, items(senderSet("b", 3600+299, team)))
	if diff := cmp.Diff([]row{rowL, rowT}, rows(t, e.client), sortRows); diff != "" {
		t.Errorf("reports with a live for the TTL minus 1s mismatch (-want +got):\n%s", diff)
	}
	// At the TTL, a is no longer live.
	later = start.Add(5 * time.Minute)
	now.Store(&later)
	sendBatches(t, e.client, items(senderSet("b", 3600+300, team)))
	if diff := cmp.Diff([]row{rowT}, rows(t, e.client), sortRows); diff != "" {
		t.Errorf("reports after a expired mismatch (-want +got):\n%s", diff)
	}
}

// TestMaxPolicySenders sends sets of one sender more than the limit: it is
// rejected and counted, until a sender stops.
func TestMaxPolicySenders(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg, MaxPolicySenders: 2})
	acks := sendBatches(t, e.client,
		items(senderSet("a", 1), senderSet("b", 1), senderSet("c", 1)),
		items(stopping("a", 2), senderSet("c", 2)),
	)
	var got []string
	for _, a := range acks {
		for _, r := range a.GetRejected() {
			got = append(got, r.GetViolation().GetField())
		}
	}
	if diff := cmp.Diff([]string{"items[2].policy_set.sender"}, got); diff != "" {
		t.Errorf("Publish(3 senders, max 2) rejected mismatch (-want +got):\n%s", diff)
	}
	if n := labelled(t, reg, "verdict_reports_items_over_limit_total", "limit", "max_policy_senders"); n != 1 {
		t.Errorf("verdict_reports_items_over_limit_total{limit=max_policy_senders} = %v, want 1", n)
	}
}

// TestMaxResources evaluates one resource more than the limit, and deletes
// resources over the max tombstones.
func TestMaxResources(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg, MaxResources: 2, MaxTombstones: 1})
	acks := sendBatches(t, e.client,
		items(
			evaluation(podA, 0, failL, []pol{polLatest}),
			evaluation(podB, 0, failL, []pol{polLatest}),
			evaluation(podC, 0, failL, []pol{polLatest}), // the third resource
			evaluation(podA, 1, passL, []pol{polLatest}), // a resource held
		),
		items(
			deletion(nsDev, 2), // the first tombstone
			deletion(podC, 3),  // not held, over the max tombstones
			deletion(podB, 4),  // held: its entries go, without a tombstone
		),
	)
	var got []string
	for _, a := range acks {
		for _, r := range a.GetRejected() {
			got = append(got, r.GetViolation().GetField())
		}
	}
	if diff := cmp.Diff([]string{"items[2].evaluation.resource", "items[1].evaluation.resource"}, got); diff != "" {
		t.Errorf("Publish(over the max resources and tombstones) rejected mismatch (-want +got):\n%s", diff)
	}
	for limit, want := range map[string]float64{"max_resources": 1, "max_tombstones": 1} {
		if n := labelled(t, reg, "verdict_reports_items_over_limit_total", "limit", limit); n != want {
			t.Errorf("verdict_reports_items_over_limit_total{limit=%q} = %v, want %v", limit, n, want)
		}
	}
	if n := metric(t, reg, "verdict_reports_tombstones_skipped_total"); n != 1 {
		t.Errorf("verdict_reports_tombstones_skipped_total = %v, want 1", n)
	}
	want := []row{{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", "pass", 1}}
	if diff := cmp.Diff(want, rows(t, e.client)); diff != "" {
		t.Errorf("reports mismatch (-want +got):\n%s", diff)
	}
}

// TestMaxInflightBytes holds the store so that no batch is acknowledged,
// and sends more batches than the in-flight budget holds: the writer
// receives what fits, then the rest once the first are acknowledged.
func TestMaxInflightBytes(t *testing.T) {
	gate := make(chan struct{})
	reg := prometheus.NewRegistry()
	batch := func(sec int) []*verdictv1.PublishItem {
		return items(evaluation(podA, sec, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, strings.Repeat("x", 1000))}, []pol{polLatest}))
	}
	size := proto.Size(&verdictv1.PublishRequest{Sequence: 1, Items: batch(0)})
	budget := 2*size + size/2 // two batches
	e := startWrapped(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{Registry: reg, MaxMessageBytes: budget, MaxInflightBytes: int64(budget)}, func(s reportwriter.Store) reportwriter.Store {
		return gatedStore{Store: s, gate: gate}
	})
	st, err := e.client.Publish(t.Context())
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for i := range 4 {
		if err := st.Send(&verdictv1.PublishRequest{Sequence: uint64(i + 1), Items: batch(i)}); err != nil {
			t.Fatalf("Send(batch %d): %v", i+1, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for metric(t, reg, "verdict_reports_inflight_bytes") < float64(2*size) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for a third batch, if it were taken
	if got := metric(t, reg, "verdict_reports_inflight_bytes"); got != float64(2*size) {
		t.Errorf("verdict_reports_inflight_bytes = %v, want %d (two batches of %d bytes, max %d)", got, 2*size, size, budget)
	}
	close(gate)
	for i := range 4 {
		if _, err := st.Recv(); err != nil {
			t.Fatalf("Recv(ack %d): %v", i+1, err)
		}
	}
	st.CloseSend()
}

// memStore is a Store that keeps nothing (fast writes).
type memStore struct{}

func (memStore) Load(context.Context) (*reportwriter.State, error) {
	return &reportwriter.State{Tombstones: map[string]time.Time{}}, nil
}
func (memStore) Write(context.Context, *reportwriter.Changes) error { return nil }
func (memStore) Close() error                                       { return nil }

// TestAckTimeout publishes batches without reading the acknowledgements,
// with the smallest flow-control windows (and no limit of unacknowledged
// batches): once they fill, the writer ends
// the stream after the ack timeout instead of holding its batches.
func TestAckTimeout(t *testing.T) {
	reg := prometheus.NewRegistry()
	w, err := reportwriter.New(reportwriter.Options{Store: memStore{}, Registry: reg, AckTimeout: 200 * time.Millisecond, MaxUnacked: 1 << 20, Now: func() time.Time { return t0.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	verdictv1.RegisterReportServiceServer(srv, w)
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := verdictv1.NewReportServiceClient(conn).Publish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for seq := uint64(1); time.Now().Before(deadline); seq++ {
		if err := st.Send(&verdictv1.PublishRequest{Sequence: seq, Items: items(deletion(podA, 0))}); err != nil {
			break // the writer ended the stream
		}
		if labelled(t, reg, "verdict_reports_limit_exceeded_total", "limit", "ack_timeout") > 0 {
			break
		}
	}
	if n := labelled(t, reg, "verdict_reports_limit_exceeded_total", "limit", "ack_timeout"); n != 1 {
		t.Errorf("verdict_reports_limit_exceeded_total{limit=ack_timeout} = %v, want 1", n)
	}
}
