package reportwriter_test

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

// t0 is the time of the first evaluation of the tests.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) *timestamppb.Timestamp {
	return timestamppb.New(t0.Add(time.Duration(sec) * time.Second))
}

// env is a writer on a real bbolt file behind a real gRPC server on a
// loopback port.
type env struct {
	path   string
	addr   string
	store  *boltstore.Store
	writer *reportwriter.Writer
	srv    *grpc.Server
	client verdictv1.ReportServiceClient
}

// startWriter starts a writer on the store file path (created when
// missing), on addr ("127.0.0.1:0" for any port).
func startWriter(t *testing.T, path, addr string, opts reportwriter.Options) *env {
	t.Helper()
	return startWrapped(t, path, addr, opts, nil)
}

// gatedStore holds every Write until gate is closed.
type gatedStore struct {
	reportwriter.Store
	gate chan struct{}
}

func (g gatedStore) Write(ctx context.Context, c *reportwriter.Changes) error {
	<-g.gate
	return g.Store.Write(ctx, c)
}

// startWrapped is startWriter with the store wrapped by wrap (when not
// nil).
func startWrapped(t *testing.T, path, addr string, opts reportwriter.Options, wrap func(reportwriter.Store) reportwriter.Store) *env {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatalf("boltstore.Open(%s): %v", path, err)
	}
	opts.Store = st
	if wrap != nil {
		opts.Store = wrap(st)
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0.Add(time.Hour) }
	}
	w, err := reportwriter.New(opts)
	if err != nil {
		t.Fatalf("reportwriter.New: %v", err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	verdictv1.RegisterReportServiceServer(srv, w)
	go srv.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	e := &env{path: path, addr: lis.Addr().String(), store: st, writer: w, srv: srv, client: verdictv1.NewReportServiceClient(conn)}
	t.Cleanup(func() {
		conn.Close()
		e.stop()
	})
	return e
}

// startWriterB is startWriter for benchmarks.
func startWriterB(b *testing.B) *benchEnv {
	b.Helper()
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "reports.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := reportwriter.New(reportwriter.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	verdictv1.RegisterReportServiceServer(srv, w)
	go srv.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		srv.Stop()
		w.Close(context.Background())
		st.Close()
	})
	return &benchEnv{conn: conn, writer: w}
}

type benchEnv struct {
	conn   *grpc.ClientConn
	writer *reportwriter.Writer
}

// stop stops the server abruptly, the writer and the store. It may be
// called more than once.
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	e.srv.Stop()
	e.writer.Close(context.Background())
	e.store.Close()
	e.srv = nil
}

func tempDB(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "reports.db")
}

// sendBatches sends batches on one stream and returns their acknowledgements.
func sendBatches(t *testing.T, c verdictv1.ReportServiceClient, batches ...[]*verdictv1.PublishItem) []*verdictv1.PublishResponse {
	t.Helper()
	st, err := c.Publish(t.Context())
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	var acks []*verdictv1.PublishResponse
	for i, b := range batches {
		if err := st.Send(&verdictv1.PublishRequest{Sequence: uint64(i + 1), Items: b}); err != nil {
			t.Fatalf("Publish.Send(batch %d): %v", i+1, err)
		}
		a, err := st.Recv()
		if err != nil {
			t.Fatalf("Publish.Recv(batch %d): %v", i+1, err)
		}
		acks = append(acks, a)
	}
	st.CloseSend()
	return acks
}

// res is a resource of the tests.
type res struct{ apiVersion, kind, ns, name, uid string }

var (
	podA  = res{"v1", "Pod", "shop", "web", "uid-web"}
	podB  = res{"v1", "Pod", "shop", "debug", "uid-debug"}
	podC  = res{"v1", "Pod", "team-b", "api", "uid-api"}
	nsDev = res{"v1", "Namespace", "", "dev", "uid-ns-dev"}
)

func (r res) ref() *verdictv1.ObjectReference {
	return &verdictv1.ObjectReference{ApiVersion: r.apiVersion, Kind: r.kind, Namespace: r.ns, Name: r.name, Uid: r.uid}
}

// pol is a ClusterPolicy of the tests.
type pol struct {
	name, hash string
	background bool
	category   string
	severity   string
}

var (
	polLatest = pol{"disallow-latest-tag", "hash-latest-1", true, "Best Practices", "medium"}
	polTeam   = pol{"require-team-label", "hash-team-1", true, "Best Practices", "high"}
	polNS     = pol{"require-ns-labels", "hash-ns-1", true, "", ""}
	polAdm    = pol{"check-user", "hash-user-1", false, "Security", "low"}
)

func (p pol) version() *verdictv1.PolicyVersion {
	return &verdictv1.PolicyVersion{Kind: "ClusterPolicy", Name: p.name, ContentHash: p.hash, Background: p.background}
}

// rr is a rule result of p.
func rr(p pol, rule string, result verdictv1.Result, msg string) *verdictv1.RuleResult {
	return &verdictv1.RuleResult{
		Policy: p.name, Rule: rule, Type: verdictv1.RuleType_RULE_TYPE_VALIDATION, Result: result, Message: msg,
		Category: p.category, Severity: p.severity, Scored: true,
	}
}

// evaluation options
type evalOpt func(*verdictv1.ResourceEvaluation)

func background(e *verdictv1.ResourceEvaluation) {
	e.Source = verdictv1.ReportSource_REPORT_SOURCE_BACKGROUND
	e.Operation = verdictv1.Operation_OPERATION_UNSPECIFIED
}
func denied(e *verdictv1.ResourceEvaluation)   { e.Denied = true }
func dryRun(e *verdictv1.ResourceEvaluation)   { e.DryRun = true }
func complete(e *verdictv1.ResourceEvaluation) { e.Complete = true }
func op(o verdictv1.Operation) evalOpt {
	return func(e *verdictv1.ResourceEvaluation) { e.Operation = o }
}

// evaluation is an admission CREATE of r at second sec, unless opts say
// otherwise; the policies are those of the results.
func evaluation(r res, sec int, results []*verdictv1.RuleResult, pols []pol, opts ...evalOpt) *verdictv1.PublishItem {
	e := &verdictv1.ResourceEvaluation{
		Resource:  r.ref(),
		Source:    verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
		Operation: verdictv1.Operation_OPERATION_CREATE,
		Time:      at(sec),
		Results:   results,
	}
	for _, p := range pols {
		e.Policies = append(e.Policies, p.version())
	}
	for _, o := range opts {
		o(e)
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_Evaluation{Evaluation: e}}
}

func deletion(r res, sec int) *verdictv1.PublishItem {
	return evaluation(r, sec, nil, nil, op(verdictv1.Operation_OPERATION_DELETE))
}

func scanDone(sec int, seen ...res) *verdictv1.PublishItem {
	s := &verdictv1.BackgroundScanDone{Started: at(sec)}
	for _, r := range seen {
		s.Seen = append(s.Seen, r.ref())
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_ScanDone{ScanDone: s}}
}

type polRules struct {
	p     pol
	rules []string
}

func policySet(sec int, ps ...polRules) *verdictv1.PublishItem {
	s := &verdictv1.PolicySet{Time: at(sec)}
	for _, p := range ps {
		s.Policies = append(s.Policies, &verdictv1.PolicyState{Version: p.p.version(), Rules: p.rules})
	}
	return &verdictv1.PublishItem{Item: &verdictv1.PublishItem_PolicySet{PolicySet: s}}
}

func items(xs ...*verdictv1.PublishItem) []*verdictv1.PublishItem { return xs }

// getReport returns a final report decoded, or nil when it does not exist.
func getReport(t *testing.T, c verdictv1.ReportServiceClient, namespace, name string) *reportwriter.PolicyReport {
	t.Helper()
	kind := reportwriter.KindPolicyReport
	if namespace == "" {
		kind = reportwriter.KindClusterPolicyReport
	}
	resp, err := c.GetReport(t.Context(), &verdictv1.GetReportRequest{Kind: kind, Namespace: namespace, Name: name})
	if err != nil {
		if statusCode(err) == "NotFound" {
			return nil
		}
		t.Fatalf("GetReport(%s/%s): %v", namespace, name, err)
	}
	rep := &reportwriter.PolicyReport{}
	if err := json.Unmarshal(resp.GetReport(), rep); err != nil {
		t.Fatalf("GetReport(%s/%s): report is not JSON: %v", namespace, name, err)
	}
	return rep
}

// row is a report result reduced to what the table tests compare.
type row struct {
	Report, Policy, Rule, Resource, Result string
	Seconds                                int64
}

// rows lists the results of every final report.
func rows(t *testing.T, c verdictv1.ReportServiceClient) []row {
	t.Helper()
	list, err := c.ListReports(t.Context(), &verdictv1.ListReportsRequest{})
	if err != nil {
		t.Fatalf("ListReports: %v", err)
	}
	var out []row
	for _, info := range list.GetReports() {
		rep := getReport(t, c, info.GetNamespace(), info.GetName())
		for _, r := range rep.Results {
			for _, res := range r.Resources {
				out = append(out, row{
					Report:   info.GetNamespace() + "/" + info.GetName(),
					Policy:   r.Policy,
					Rule:     r.Rule,
					Resource: res.Kind + "/" + res.Name,
					Result:   r.Result,
					Seconds:  r.Timestamp.Seconds - t0.Unix(),
				})
			}
		}
	}
	return out
}
