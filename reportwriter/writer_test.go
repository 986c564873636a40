package reportwriter_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

func statusCode(err error) string { return status.Code(err).String() }

const (
	pass = verdictv1.Result_RESULT_PASS
	fail = verdictv1.Result_RESULT_FAIL
	skip = verdictv1.Result_RESULT_SKIP
)

// TestGolden publishes admission and background results and compares the
// final reports with the golden files, in both layouts: one result per
// resource (Kyverno's, the default: policyreport.json) and results grouped
// by outcome (Options.GroupResults: policyreport-grouped.json).
func TestGolden(t *testing.T) {
	for _, layout := range []struct {
		name   string
		opts   reportwriter.Options
		suffix string
	}{
		{"per resource", reportwriter.Options{}, ""},
		{"grouped", reportwriter.Options{GroupResults: true}, "-grouped"},
	} {
		t.Run(layout.name, func(t *testing.T) { testGolden(t, layout.opts, layout.suffix) })
	}
}

func testGolden(t *testing.T, opts reportwriter.Options, suffix string) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", opts)
	latest := []pol{polLatest}
	sendBatches(t, e.client, items(
		evaluation(podA, 0, []*verdictv1.RuleResult{
			rr(polLatest, "require-image-tag", pass, "validation rule 'require-image-tag' passed."),
			rr(polLatest, "validate-image-tag", pass, "validation rule 'validate-image-tag' passed."),
		}, latest, complete),
		evaluation(podB, 1, []*verdictv1.RuleResult{
			rr(polLatest, "require-image-tag", pass, "validation rule 'require-image-tag' passed."),
			rr(polLatest, "validate-image-tag", fail, "validation failure: Using a mutable image tag e.g. 'latest' is not allowed."),
		}, latest, complete),
	), items(
		evaluation(nsDev, 2, []*verdictv1.RuleResult{
			rr(polNS, "check-for-labels-on-namespace", fail, "validation error: The label `thisshouldntexist` is required. rule check-for-labels-on-namespace failed at path /metadata/labels/thisshouldntexist/"),
		}, []pol{polNS}, background),
	))
	tests := []struct {
		name      string
		namespace string
		report    string
		golden    string
	}{
		{"PolicyReport", "shop", "cpol-disallow-latest-tag", "policyreport" + suffix + ".json"},
		{"ClusterPolicyReport", "", "cpol-require-ns-labels", "clusterpolicyreport" + suffix + ".json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := getReport(t, e.client, tt.namespace, tt.report)
			path := filepath.Join("testdata", tt.golden)
			if *update {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden: %v", err)
			}
			want := &reportwriter.PolicyReport{}
			if err := json.Unmarshal(b, want); err != nil {
				t.Fatalf("golden %s: %v", path, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GetReport(%s/%s) mismatch (-want +got):\n%s", tt.namespace, tt.report, diff)
			}
		})
	}
	list, err := e.client.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	if err != nil {
		t.Fatalf("ListReports: %v", err)
	}
	wantList := []*verdictv1.ReportInfo{
		{Kind: "ClusterPolicyReport", Name: "cpol-require-ns-labels", Policy: "require-ns-labels", Summary: &verdictv1.ReportSummary{Fail: 1}},
		{Kind: "PolicyReport", Namespace: "shop", Name: "cpol-disallow-latest-tag", Policy: "disallow-latest-tag", Summary: &verdictv1.ReportSummary{Pass: 3, Fail: 1}},
	}
	if diff := cmp.Diff(wantList, list.GetReports(), protocmp.Transform(), protocmp.IgnoreFields(&verdictv1.ReportInfo{}, "created", "updated")); diff != "" {
		t.Errorf("ListReports() mismatch (-want +got):\n%s", diff)
	}
}

// TestSeedTables pins the reporting tables of guides/reports.md and the
// merge rules: each row publishes items in order and lists the report
// rows that remain.
func TestSeedTables(t *testing.T) {
	audit := []pol{polLatest} // an Audit policy, background: true
	enforce := []pol{polTeam} // an Enforce policy, background: true
	admOnly := []pol{polAdm}  // background: false
	failL := []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")}
	passL := []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}
	failT := []*verdictv1.RuleResult{rr(polTeam, "check-team", fail, "no team")}
	passT := []*verdictv1.RuleResult{rr(polTeam, "check-team", pass, "ok")}
	failU := []*verdictv1.RuleResult{rr(polAdm, "check-user", fail, "bad user")}
	passU := []*verdictv1.RuleResult{rr(polAdm, "check-user", pass, "ok")}
	rowL := func(result string, sec int64) row {
		return row{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", result, sec}
	}
	rowT := func(result string, sec int64) row {
		return row{"shop/cpol-require-team-label", "require-team-label", "check-team", "Pod/web", result, sec}
	}
	rowU := func(result string, sec int64) row {
		return row{"shop/cpol-check-user", "check-user", "check-user", "Pod/web", result, sec}
	}
	tests := []struct {
		name string
		give [][]*verdictv1.PublishItem
		want []row
	}{
		// background: true
		{"enforce/new resource/fail (denied): nothing", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failT, enforce, denied)}}, nil},
		{"enforce/new resource/pass: reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, passT, enforce)}}, []row{rowT("pass", 0)}},
		{"enforce/existing resource (background): reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failT, enforce, background)}}, []row{rowT("fail", 0)}},
		{"audit/new resource: reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failL, audit)}}, []row{rowL("fail", 0)}},
		{"audit/existing resource (background): reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failL, audit, background)}}, []row{rowL("fail", 0)}},
		// background: false
		{"background false/enforce/new resource/pass: reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, passU, admOnly)}}, []row{rowU("pass", 0)}},
		{"background false/enforce/new resource/fail (denied): nothing", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failU, admOnly, denied)}}, nil},
		{"background false/audit/new resource: reported", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failU, admOnly)}}, []row{rowU("fail", 0)}},
		{"background false/existing resource (background): nothing", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failU, admOnly, background)}}, nil},
		// what changes nothing
		{"dry run: nothing", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failL, audit, dryRun)}}, nil},
		{"CONNECT: nothing", [][]*verdictv1.PublishItem{{evaluation(podA, 0, failL, audit, op(verdictv1.Operation_OPERATION_CONNECT))}}, nil},
		// newer replaces older
		{"admission then newer background: background wins", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit)}, {evaluation(podA, 5, passL, audit, background)},
		}, []row{rowL("pass", 5)}},
		{"background then newer admission: admission wins", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, passL, audit, background)}, {evaluation(podA, 5, failL, audit, op(verdictv1.Operation_OPERATION_UPDATE))},
		}, []row{rowL("fail", 5)}},
		{"older evaluation arriving later: ignored", [][]*verdictv1.PublishItem{
			{evaluation(podA, 5, passL, audit)}, {evaluation(podA, 0, failL, audit)},
		}, []row{rowL("pass", 5)}},
		{"complete evaluation without a policy: its entries go", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam}, complete)},
			{evaluation(podA, 5, passT, enforce, complete, op(verdictv1.Operation_OPERATION_UPDATE))},
		}, []row{rowT("pass", 5)}},
		{"partial evaluation: other policies stay", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam}, complete)},
			{evaluation(podA, 5, passT, enforce, op(verdictv1.Operation_OPERATION_UPDATE))},
		}, []row{rowL("fail", 0), rowT("pass", 5)}},
		// deletions
		{"DELETE: entries go", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit), evaluation(podA, 1, failL, audit, background)}, {deletion(podA, 5)},
		}, nil},
		{"DELETE then older CREATE resent: stays deleted", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit)}, {deletion(podA, 5)}, {evaluation(podA, 0, failL, audit)},
		}, nil},
		{"background DELETE (a scanner's watch): every entry goes", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit), evaluation(podA, 1, failL, audit, background)},
			{evaluation(podA, 5, nil, nil, background, op(verdictv1.Operation_OPERATION_DELETE))},
		}, nil},
		{"background DELETE then older background resent: stays deleted", [][]*verdictv1.PublishItem{
			{evaluation(podA, 5, nil, nil, background, op(verdictv1.Operation_OPERATION_DELETE))}, {evaluation(podA, 1, failL, audit, background)},
		}, nil},
		{"scan done without the resource: entries go", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit, background)}, {scanDone(3)},
		}, nil},
		{"scan done that saw the resource: entries stay", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit, background)}, {scanDone(3, podA)},
		}, []row{rowL("fail", 0)}},
		{"scan done older than an admission: entries stay", [][]*verdictv1.PublishItem{
			{evaluation(podA, 5, failL, audit)}, {scanDone(3)},
		}, []row{rowL("fail", 5)}},
		// policies
		{"policy deleted: entries go", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, append(failL, failT...), []pol{polLatest, polTeam})},
			{policySet(3, polRules{polTeam, []string{"check-team"}})},
		}, []row{rowT("fail", 0)}},
		{"policy changed: removed rule goes, kept rule stays until evaluated", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag"), rr(polLatest, "require-image-tag", pass, "ok")}, audit)},
			{policySet(3, polRules{pol{polLatest.name, "hash-latest-2", true, "", ""}, []string{"validate-image-tag"}})},
		}, []row{rowL("fail", 0)}},
		{"policy changed: a new evaluation refreshes", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit)},
			{policySet(3, polRules{pol{polLatest.name, "hash-latest-2", true, "", ""}, []string{"validate-image-tag"}})},
			{evaluation(podA, 5, passL, []pol{{polLatest.name, "hash-latest-2", true, "Best Practices", "medium"}}, background)},
		}, []row{rowL("pass", 5)}},
		{"policy now background false: background entries go", [][]*verdictv1.PublishItem{
			{evaluation(podA, 0, failL, audit, background)},
			{policySet(3, polRules{pol{polLatest.name, "hash-latest-2", false, "", ""}, []string{"validate-image-tag"}})},
		}, nil},
		{"evaluation older than the policy set, of a deleted policy: ignored", [][]*verdictv1.PublishItem{
			{policySet(3, polRules{polTeam, []string{"check-team"}})},
			{evaluation(podA, 0, failL, audit)},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
			sendBatches(t, e.client, tt.give...)
			if diff := cmp.Diff(tt.want, rows(t, e.client), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reports after %s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestDuplicates publishes the same batch twice: the second changes
// nothing and is counted.
func TestDuplicates(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	batch := items(
		evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}),
		evaluation(podB, 1, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}, []pol{polLatest}, background),
		deletion(podC, 2),
	)
	acks := sendBatches(t, e.client, batch)
	before := getReport(t, e.client, "shop", "cpol-disallow-latest-tag")
	info1, _ := e.client.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	acks = append(acks, sendBatches(t, e.client, batch, batch)...)
	after := getReport(t, e.client, "shop", "cpol-disallow-latest-tag")
	info2, _ := e.client.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	var dups []uint32
	for _, a := range acks {
		dups = append(dups, a.GetDuplicates())
	}
	if diff := cmp.Diff([]uint32{0, 3, 3}, dups); diff != "" {
		t.Errorf("Publish duplicates per ack mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("report after a duplicate batch changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(info1, info2, protocmp.Transform()); diff != "" {
		t.Errorf("ListReports after a duplicate batch changed (-before +after):\n%s", diff)
	}
}

// TestRestart stops the writer and starts it again on the same file: the
// reports and the intermediaries (an older resend changes nothing) are
// kept.
func TestRestart(t *testing.T) {
	path := tempDB(t)
	e := startWriter(t, path, "127.0.0.1:0", reportwriter.Options{})
	sendBatches(t, e.client, items(
		evaluation(podA, 5, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}),
		evaluation(nsDev, 6, []*verdictv1.RuleResult{rr(polNS, "check-for-labels-on-namespace", fail, "bad")}, []pol{polNS}, background),
		deletion(podB, 7),
	))
	want := rows(t, e.client)
	wantList, _ := e.client.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	e.stop()

	e2 := startWriter(t, path, "127.0.0.1:0", reportwriter.Options{})
	if diff := cmp.Diff(want, rows(t, e2.client)); diff != "" {
		t.Errorf("reports after restart mismatch (-want +got):\n%s", diff)
	}
	gotList, _ := e2.client.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	if diff := cmp.Diff(wantList, gotList, protocmp.Transform()); diff != "" {
		t.Errorf("ListReports after restart mismatch (-want +got):\n%s", diff)
	}
	// The intermediaries and tombstones survived: older evaluations change
	// nothing.
	acks := sendBatches(t, e2.client, items(
		evaluation(podA, 1, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}, []pol{polLatest}),
		evaluation(podB, 2, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", pass, "ok")}, []pol{polLatest}),
	))
	if got := acks[0].GetDuplicates(); got != 2 {
		t.Errorf("Publish(older evaluations after restart).Duplicates = %d, want 2", got)
	}
	if diff := cmp.Diff(want, rows(t, e2.client)); diff != "" {
		t.Errorf("reports after older evaluations mismatch (-want +got):\n%s", diff)
	}
}

// TestRejected checks that invalid items are rejected by index and field
// and the rest of the batch is applied.
func TestRejected(t *testing.T) {
	e := startWriter(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{})
	noKind := evaluation(res{"v1", "", "shop", "x", "u1"}, 0, nil, nil)
	noTime := evaluation(podB, 0, nil, nil)
	noTime.GetEvaluation().Time = nil
	unlisted := evaluation(podB, 0, []*verdictv1.RuleResult{rr(polTeam, "check-team", fail, "x")}, []pol{polLatest})
	acks := sendBatches(t, e.client, items(
		noKind,
		evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}),
		noTime,
		unlisted,
		&verdictv1.PublishItem{},
	))
	var got []string
	for _, r := range acks[0].GetRejected() {
		got = append(got, r.GetViolation().GetField())
	}
	want := []string{"items[0].evaluation.resource.kind", "items[2].evaluation.time", "items[3].evaluation.results[0].policy", "items[4]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Publish rejected fields mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]row{{"shop/cpol-disallow-latest-tag", "disallow-latest-tag", "validate-image-tag", "Pod/web", "fail", 0}}, rows(t, e.client)); diff != "" {
		t.Errorf("reports mismatch (-want +got):\n%s", diff)
	}
}

// TestLimits checks that each stream limit ends the stream with the code
// and a message naming the limit.
func TestLimits(t *testing.T) {
	big := evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, strings.Repeat("x", 2000))}, []pol{polLatest})
	tests := []struct {
		name     string
		opts     reportwriter.Options
		give     []*verdictv1.PublishRequest
		wantCode codes.Code
		wantMsg  string
	}{
		{"max batch size", reportwriter.Options{MaxBatchItems: 2},
			[]*verdictv1.PublishRequest{{Sequence: 1, Items: items(big, big, big)}}, codes.ResourceExhausted, "max batch size 2"},
		{"max message size", reportwriter.Options{MaxMessageBytes: 1000},
			[]*verdictv1.PublishRequest{{Sequence: 1, Items: items(big)}}, codes.ResourceExhausted, "max message size 1000 bytes"},
		{"sequence required", reportwriter.Options{},
			[]*verdictv1.PublishRequest{{Items: items(big)}}, codes.InvalidArgument, "sequence: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startWriter(t, tempDB(t), "127.0.0.1:0", tt.opts)
			st, err := e.client.Publish(t.Context())
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			for _, b := range tt.give {
				st.Send(b)
			}
			_, err = st.Recv()
			if status.Code(err) != tt.wantCode || !strings.Contains(status.Convert(err).Message(), tt.wantMsg) {
				t.Errorf("Publish(%s) = %v, want %v naming %q", tt.name, err, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

// TestMaxUnacked holds the store so that no batch is acknowledged, and
// sends one batch more than the limit.
func TestMaxUnacked(t *testing.T) {
	gate := make(chan struct{})
	e := startWrapped(t, tempDB(t), "127.0.0.1:0", reportwriter.Options{MaxUnacked: 3}, func(s reportwriter.Store) reportwriter.Store {
		return gatedStore{Store: s, gate: gate}
	})
	defer close(gate)
	st, err := e.client.Publish(t.Context())
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for i := range 4 {
		// Each batch changes the state, so each needs a store write.
		st.Send(&verdictv1.PublishRequest{Sequence: uint64(i + 1), Items: items(evaluation(podA, i, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad")}, []pol{polLatest}))})
	}
	_, err = st.Recv()
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "more than 3 unacknowledged batches") {
		t.Errorf("Publish(4 batches, limit 3) = %v, want ResourceExhausted naming the max unacknowledged batches", err)
	}
}

// TestReportJSON: with a store that reads reports back (the embedded
// store), the writer's tables hold no report JSON and Report reads it from
// the store; with another store, the tables keep it. Both return what the
// store holds.
func TestReportJSON(t *testing.T) {
	tests := []struct {
		name   string
		wrap   func(reportwriter.Store) reportwriter.Store
		inView bool
	}{
		{"store reads reports back", nil, false},
		{"store without ReportReader", func(s reportwriter.Store) reportwriter.Store {
			open := make(chan struct{})
			close(open)
			return gatedStore{Store: s, gate: open}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startWrapped(t, filepath.Join(t.TempDir(), "reports.db"), "127.0.0.1:0", reportwriter.Options{}, tt.wrap)
			ctx := t.Context()
			if _, err := e.writer.Apply(ctx, items(evaluation(podA, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")}, []pol{polLatest}))); err != nil {
				t.Fatal(err)
			}
			if err := e.writer.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			k := reportwriter.ReportKey{Namespace: "shop", Name: "cpol-disallow-latest-tag"}
			list := e.writer.Reports("", "")
			if len(list) != 1 || list[0].Key != k {
				t.Fatalf("Reports() = %v, want the report %v", list, k)
			}
			if got := list[0].Report != nil; got != tt.inView {
				t.Errorf("Reports()[0].Report set = %v, want %v", got, tt.inView)
			}
			stored, err := e.store.ReadReport(ctx, k)
			if err != nil || stored == nil {
				t.Fatalf("boltstore ReadReport(%v) = %q, %v; want the report", k, stored, err)
			}
			sr, err := e.writer.Report(ctx, k)
			if err != nil || sr == nil {
				t.Fatalf("Report(%v) = %v, %v; want the report", k, sr, err)
			}
			if diff := cmp.Diff(string(stored), string(sr.Report)); diff != "" {
				t.Errorf("Report(%v).Report (-store +got):\n%s", k, diff)
			}
			if sr, err := e.writer.Report(ctx, reportwriter.ReportKey{Namespace: "shop", Name: "cpol-other"}); sr != nil || err != nil {
				t.Errorf("Report(a report not held) = %v, %v; want nil, nil", sr, err)
			}
		})
	}
}

// recordStore records the number of final reports each Write puts, and
// their sizes.
type recordStore struct {
	reportwriter.Store
	mu    *sync.Mutex
	puts  *[]int
	sizes *[]int
}

func (r recordStore) Write(ctx context.Context, c *reportwriter.Changes) error {
	r.mu.Lock()
	if len(c.PutReports) > 0 {
		*r.puts = append(*r.puts, len(c.PutReports))
	}
	for _, sr := range c.PutReports {
		*r.sizes = append(*r.sizes, len(sr.Report))
	}
	r.mu.Unlock()
	return r.Store.Write(ctx, c)
}

// TestMaxReportWriteBytes: the changed final reports are written in parts
// closed once their JSON reaches MaxReportWriteBytes; every report is
// written.
func TestMaxReportWriteBytes(t *testing.T) {
	// Three reports of the same size: the same policy and Pod name in
	// namespaces of the same length.
	var evals []*verdictv1.PublishItem
	for _, ns := range []string{"ns-a", "ns-b", "ns-c"} {
		evals = append(evals, evaluation(res{"v1", "Pod", ns, "web", "uid-" + ns}, 0, []*verdictv1.RuleResult{rr(polLatest, "validate-image-tag", fail, "bad tag")}, []pol{polLatest}))
	}
	run := func(maxBytes int) (puts, sizes []int, reports int) {
		var mu sync.Mutex
		wrap := func(s reportwriter.Store) reportwriter.Store {
			return recordStore{Store: s, mu: &mu, puts: &puts, sizes: &sizes}
		}
		e := startWrapped(t, filepath.Join(t.TempDir(), "reports.db"), "127.0.0.1:0", reportwriter.Options{MaxReportWriteBytes: maxBytes}, wrap)
		if _, err := e.writer.Apply(t.Context(), evals); err != nil {
			t.Fatal(err)
		}
		if err := e.writer.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return puts, sizes, len(e.writer.Reports("", ""))
	}
	_, sizes, _ := run(0)
	if len(sizes) != 3 || sizes[0] != sizes[1] || sizes[1] != sizes[2] {
		t.Fatalf("report sizes = %v, want three of the same size", sizes)
	}
	size := sizes[0]
	tests := []struct {
		name     string
		maxBytes int
		want     []int
	}{
		{"default", 0, []int{3}},
		{"at the limit: a report a part", size, []int{1, 1, 1}},
		{"over one report: two reports, then one", size + 1, []int{2, 1}},
		{"the size of all", 3 * size, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			puts, _, reports := run(tt.maxBytes)
			if diff := cmp.Diff(tt.want, puts); diff != "" {
				t.Errorf("reports put by each store write with MaxReportWriteBytes %d (-want +got):\n%s", tt.maxBytes, diff)
			}
			if reports != 3 {
				t.Errorf("Reports() = %d reports, want 3", reports)
			}
		})
	}
}
