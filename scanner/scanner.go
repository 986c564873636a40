package scanner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/policyreport"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Defaults of Options.
const (
	DefaultBatchSize        = client.DefaultBatchSize
	DefaultMaxInFlight      = client.DefaultMaxInFlight
	DefaultSinkBatch        = 500
	DefaultProgressInterval = 500 * time.Millisecond
)

// Resource is one stored object to scan.
type Resource struct {
	// Object is the resource as stored. The scanner never modifies it.
	Object map[string]any
	// Source locates the resource: "file.yaml:12" for a file, empty for a
	// cluster.
	Source string

	APIVersion, Kind, Namespace, Name string
	UID, ResourceVersion              string
	// NamespaceLabels are the labels of the resource's namespace, for
	// namespaceSelector.
	NamespaceLabels map[string]string
	// GVR is the API resource the resource was listed from (empty for
	// files): requests carry it, so that the server matches the
	// resourceRules of ValidatingPolicies against the plural the cluster
	// serves instead of one guessed from the kind.
	GVR schema.GroupVersionResource
	// JSON is Object encoded, when the source has it (a FileSource
	// encodes each resource once, not once per scan). Optional.
	JSON []byte

	// hash is the content hash of Object a watch recorded (see
	// contentHash).
	hash string
}

// body is what a request carries: JSON when set, else Object.
func (r *Resource) body() any {
	if len(r.JSON) > 0 {
		return r.JSON
	}
	return r.Object
}

// Ref is the identity of the resource.
func (r *Resource) Ref() ResourceRef {
	return ResourceRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion}
}

// ResourceRef identifies a Kubernetes object.
type ResourceRef struct {
	APIVersion, Kind, Namespace, Name, UID, ResourceVersion string
}

// clone copies the strings of r, which may share the memory of the
// document they were decoded from, so that keeping r (ScanDone.Seen keeps
// one per resource) does not keep the document.
func (r ResourceRef) clone() ResourceRef {
	return ResourceRef{
		APIVersion: strings.Clone(r.APIVersion), Kind: strings.Clone(r.Kind),
		Namespace: strings.Clone(r.Namespace), Name: strings.Clone(r.Name),
		UID: strings.Clone(r.UID), ResourceVersion: strings.Clone(r.ResourceVersion),
	}
}

// String is namespace/Kind/name, as verdict apply names resources.
func (r ResourceRef) String() string {
	return r.Namespace + "/" + r.Kind + "/" + r.Name
}

// resourceOf fills the identity fields of a Resource from obj.
func resourceOf(obj map[string]any) *Resource {
	r := &Resource{Object: obj}
	r.APIVersion, _ = obj["apiVersion"].(string)
	r.Kind, _ = obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	r.Name, _ = meta["name"].(string)
	r.Namespace, _ = meta["namespace"].(string)
	r.UID, _ = meta["uid"].(string)
	r.ResourceVersion, _ = meta["resourceVersion"].(string)
	return r
}

func objectLabels(obj map[string]any) map[string]string {
	return kyverno.MetadataStrings(obj, "labels")
}

func objectAnnotations(obj map[string]any) map[string]string {
	return kyverno.MetadataStrings(obj, "annotations")
}

func groupOf(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// Source delivers the resources to scan.
type Source interface {
	// List visits every resource of shard. It may call v.Expect before or
	// while it visits, to tell how many resources it expects (for
	// progress). It returns v.Visit's error, which ends the listing.
	List(ctx context.Context, shard Shard, v Visitor) error
}

// Visitor receives the resources of a Source.
type Visitor interface {
	// Expect adds n to the number of resources expected.
	Expect(n int)
	// Kind declares that the source lists every resource of kind (in the
	// shard): one of them that is not visited does not exist. The
	// ScanDone of the scan names these kinds.
	Kind(kind string)
	// Visit scans r.
	Visit(r *Resource) error
}

// Result is the outcome of scanning one resource.
type Result struct {
	Resource ResourceRef
	// Source locates a resource read from a file.
	Source string
	// Response is the decision server's answer; nil when Err is set.
	Response *verdictv1.EvaluateResponse
	// Err is why the resource could not be evaluated (a status error).
	Err error
	// Time is when the answer arrived.
	Time time.Time
	// AllPolicies is true when the resource was evaluated against every
	// policy of the server (not a policy rescan): a policy without results
	// has none for it.
	AllPolicies bool
	// Deleted is true when a watch saw the resource deleted: every entry
	// of the resource goes (Response and Err are nil, Time is when the
	// deletion was handled).
	Deleted bool
}

// ScanDone tells a ResultSink that the scan of a shard finished.
type ScanDone struct {
	Shard Shard
	// Policies limits what the scan covered: the policies a policy rescan
	// evaluated; empty for a full scan (every policy of the server).
	Policies []string
	// Kinds are the kinds the source listed completely, sorted.
	Kinds []string
	// Seen are the resources scanned, in the order of the scan. The
	// entries of other resources of this shard (for Policies, or for every
	// policy) are stale: those resources are gone.
	Seen []ResourceRef
	// Started is when the scan began; results older than that are stale.
	Started time.Time
}

// ResultSink is where results go: the report writer (ReportSink), or a
// printer.
// Write is called from one goroutine, in scan order; ScanDone once at the
// end of a scan that listed its whole shard (not after an error).
type ResultSink interface {
	Write(ctx context.Context, results []Result) error
	ScanDone(ctx context.Context, done ScanDone) error
}

// Options configure a Scanner. The zero value scans the whole source once
// and throws the results away.
type Options struct {
	// Shard is the part of the source to scan. Default: all (0/1).
	Shard Shard
	// BatchSize is the number of resources per EvaluateStream batch; at
	// most the server's batch limit (1000 by default). Default 100.
	BatchSize int
	// MaxInFlight is the number of batches sent and not answered yet.
	// Default 4.
	MaxInFlight int
	// Linger is how long a batch that is not full waits for more
	// resources before it is sent (a slow listing). Default 5ms.
	Linger time.Duration
	// Sink receives the results. Default: none.
	Sink ResultSink
	// SinkBatch is the number of results handed to one Sink.Write.
	// Default 500.
	SinkBatch int
	// Progress, when set, receives a progress line (resources done of
	// expected, resources per second) every ProgressInterval, overwritten
	// in place with "\r", and a last line with a newline. Set it to a
	// terminal only. Default: none.
	Progress         io.Writer
	ProgressInterval time.Duration // default 500ms
	// Generator, when set, applies what generateExisting rules ask for
	// (see Generator). Default: none, generateExisting is not replayed.
	Generator *Generator
	// Logger receives problems that do not stop a scan. Default: discard.
	Logger *slog.Logger
	// Registry receives the scanner's metrics (verdict_scan_*). Default:
	// none.
	Registry prometheus.Registerer
}

func (o Options) withDefaults() (Options, error) {
	o.Shard = o.Shard.Normal()
	if err := o.Shard.Check(); err != nil {
		return o, fmt.Errorf("shard: %w", err)
	}
	options.Positive(&o.BatchSize, DefaultBatchSize)
	options.Positive(&o.MaxInFlight, DefaultMaxInFlight)
	options.Positive(&o.SinkBatch, DefaultSinkBatch)
	options.Positive(&o.ProgressInterval, DefaultProgressInterval)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o, nil
}

// Scanner scans resources in background mode on a decision server.
type Scanner struct {
	c       *client.Client
	opts    Options
	metrics *metrics
}

// New returns a Scanner that sends resources to the server of c.
func New(c *client.Client, opts Options) (*Scanner, error) {
	if c == nil {
		return nil, errors.New("scanner: no client")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Registry)
	if err != nil {
		return nil, fmt.Errorf("scanner metrics: %w", err)
	}
	return &Scanner{c: c, opts: o, metrics: m}, nil
}

// Counts are the rule results of a scan (internal/policyreport's tally).
type Counts = policyreport.Summary

// Summary is what a scan did.
type Summary struct {
	Shard Shard
	// Resources is the number of resources scanned, Failed the number the
	// server could not evaluate (their Result has Err).
	Resources, Failed int
	// Counts are the rule results of the background evaluation.
	Counts Counts
	// Generated is the number of resources generateExisting created or
	// updated, Triggers the number of triggers it was replayed for.
	Generated, Triggers int
	// Mutated is the number of existing targets mutateExisting patched.
	Mutated int
	// Deleted is the number of deleted resources a watch round reported.
	Deleted  int
	Duration time.Duration
}

// ScanOptions narrow one scan.
type ScanOptions struct {
	// Policies evaluates only these policies of the server ("name", or
	// "namespace/name" for a Policy): a policy rescan. Default: every
	// policy.
	Policies []string

	// partial marks the scan of a round of watched changes: the source
	// lists some resources only, so there is no ScanDone, and no progress.
	partial bool
	// evaluated, when set, is called with each resource the server
	// evaluated (from the goroutine of the results).
	evaluated func(*Resource)
	// mode labels the metrics: full, policy or watch.
	mode string
}

// Scan lists the shard of src once, evaluates every resource in
// background mode through EvaluateStream, hands the results to the sink
// and, when the listing is complete, tells the sink the shard is done.
// With a Generator it also replays generateExisting rules for the
// resources that trigger them (policies is then required: see
// LoadPolicies). A resource the server cannot evaluate is a Result with
// Err, not an error of Scan; Scan fails when the source, the stream or the
// sink fails.
func (s *Scanner) Scan(ctx context.Context, src Source, policies *PolicySet, so ScanOptions) (Summary, error) {
	run := &scanRun{
		ctx:      ctx,
		s:        s,
		policies: policies,
		so:       so,
		ids:      map[string]*pending{},
		kinds:    map[string]bool{},
		done:     ScanDone{Shard: s.opts.Shard, Policies: so.Policies, Started: time.Now()},
		sum:      Summary{Shard: s.opts.Shard},
	}
	progressW := s.opts.Progress
	if so.partial {
		progressW = nil
	}
	run.progress = newProgress(progressW, s.opts.ProgressInterval)
	defer run.progress.stop()

	var listErr error
	items := func(yield func(client.Item) bool) {
		listErr = src.List(ctx, s.opts.Shard, &visitor{run: run, yield: yield})
	}
	err := s.c.Scan(ctx, iter.Seq[client.Item](items), run.result, client.ScanOptions{
		BatchSize:   s.opts.BatchSize,
		MaxInFlight: s.opts.MaxInFlight,
		Linger:      s.opts.Linger,
	})
	if err == nil && listErr != nil && !errors.Is(listErr, errStop) {
		err = listErr
	}
	if err == nil {
		err = run.flush(ctx)
	}
	run.sum.Duration = time.Since(run.done.Started)
	run.progress.finish()
	s.metrics.scanned(so.mode, run.sum, err)
	if err != nil {
		return run.sum, err
	}
	if sink := s.opts.Sink; sink != nil && !so.partial {
		for k := range run.kinds {
			run.done.Kinds = append(run.done.Kinds, k)
		}
		sort.Strings(run.done.Kinds)
		if err := sink.ScanDone(ctx, run.done); err != nil {
			return run.sum, fmt.Errorf("scan done: %w", err)
		}
	}
	return run.sum, nil
}

// errStop ends a listing when the stream no longer takes items.
var errStop = errors.New("scan stopped")

// pending is a resource sent and not answered yet.
type pending struct {
	r *Resource
	// generate lists the generateExisting policies of a replay item,
	// mutate the mutateExisting ones.
	generate []*PolicyRef
	mutate   []*PolicyRef
}

// scanRun is the state of one Scan.
type scanRun struct {
	ctx      context.Context
	s        *Scanner
	policies *PolicySet
	so       ScanOptions
	progress *progress

	mu    sync.Mutex // guards ids, next and kinds, written by the listing goroutine
	ids   map[string]*pending
	next  int
	kinds map[string]bool

	// Owned by the goroutine of client.Scan's result function.
	buf  []Result
	done ScanDone
	sum  Summary
}

// visitor turns a Source's resources into stream items.
type visitor struct {
	run   *scanRun
	yield func(client.Item) bool
}

func (v *visitor) Expect(n int) { v.run.progress.expect(n) }

func (v *visitor) Kind(kind string) {
	v.run.mu.Lock()
	v.run.kinds[kind] = true
	v.run.mu.Unlock()
}

func (v *visitor) Visit(r *Resource) error {
	run := v.run
	req, err := run.request(r)
	if err != nil {
		return err
	}
	if !v.yield(run.item(&pending{r: r}, req)) {
		return errStop
	}
	if gen := run.replayFor(r, run.policies.generateExisting(), Generated); len(gen) > 0 {
		if err := v.replay(&pending{r: r, generate: gen}, gen); err != nil {
			return err
		}
	}
	if mut := run.replayFor(r, run.policies.mutateExisting(), Mutated); len(mut) > 0 {
		return v.replay(&pending{r: r, mutate: mut}, mut)
	}
	return nil
}

// replay yields the generateExisting (p.generate set) or mutateExisting
// replay of policies on p's resource.
func (v *visitor) replay(p *pending, policies []*PolicyRef) error {
	req, err := replayRequest(p.r, policies)
	if err != nil {
		return err
	}
	req.GenerateExisting = p.generate != nil
	req.MutateExisting = p.mutate != nil
	if !v.yield(v.run.item(p, req)) {
		return errStop
	}
	return nil
}

// replayRequest is the background request that replays trigger r for
// policies.
func replayRequest(r *Resource, policies []*PolicyRef) (*verdictv1.EvaluateRequest, error) {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = p.Key()
	}
	return backgroundRequest(r, client.Policies(names...))
}

// backgroundRequest is the background request of r, in its namespace, as
// its resource when known, with opts.
func backgroundRequest(r *Resource, opts ...client.RequestOption) (*verdictv1.EvaluateRequest, error) {
	opts = append(opts, client.Background(), client.Namespace(r.Namespace, r.NamespaceLabels))
	if r.GVR.Resource != "" {
		opts = append(opts, client.Resource(r.GVR.Group, r.GVR.Version, r.GVR.Resource))
	}
	req, err := client.NewRequest(r.body(), opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describeResource(r), err)
	}
	return req, nil
}

func describeResource(r *Resource) string {
	if r.Source != "" {
		return r.Source
	}
	return r.Ref().String()
}

// request is the background request of r.
func (run *scanRun) request(r *Resource) (*verdictv1.EvaluateRequest, error) {
	if len(run.so.Policies) > 0 {
		return backgroundRequest(r, client.Policies(run.so.Policies...))
	}
	return backgroundRequest(r)
}

func (run *scanRun) item(p *pending, req *verdictv1.EvaluateRequest) client.Item {
	run.mu.Lock()
	id := strconv.Itoa(run.next)
	run.next++
	run.ids[id] = p
	run.mu.Unlock()
	return client.Item{ID: id, Request: req}
}

func (s *PolicySet) generateExisting() []*PolicyRef {
	if s == nil {
		return nil
	}
	return s.GenerateExisting
}

func (s *PolicySet) mutateExisting() []*PolicyRef {
	if s == nil {
		return nil
	}
	return s.MutateExisting
}

// replayFor lists the policies of candidates that r triggers and that were
// not replayed for it at their current version (what says which record).
func (run *scanRun) replayFor(r *Resource, candidates []*PolicyRef, what Replay) []*PolicyRef {
	g := run.s.opts.Generator
	if g == nil {
		return nil
	}
	var out []*PolicyRef
	for _, p := range candidates {
		if !p.Matches(r) || g.Applied(r, p, what) {
			continue
		}
		if len(run.so.Policies) > 0 && !slices.Contains(run.so.Policies, p.Key()) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// result handles the answer for one item.
func (run *scanRun) result(res client.Result) error {
	run.mu.Lock()
	p := run.ids[res.ID]
	delete(run.ids, res.ID)
	run.mu.Unlock()
	if p == nil {
		return fmt.Errorf("result for unknown item %q", res.ID)
	}
	ctx := run.ctx
	if p.generate != nil || p.mutate != nil {
		return run.replayed(ctx, p, res)
	}
	run.progress.done(1)
	run.sum.Resources++
	run.done.Seen = append(run.done.Seen, p.r.Ref().clone())
	if res.Err != nil {
		run.sum.Failed++
	} else {
		for _, rr := range res.Response.GetResults() {
			run.sum.Counts.Add(rr.GetResult().Name())
		}
		if run.so.evaluated != nil {
			run.so.evaluated(p.r)
		}
	}
	if run.s.opts.Sink == nil {
		return nil
	}
	run.buf = append(run.buf, Result{
		Resource: p.r.Ref(), Source: p.r.Source, Response: res.Response, Err: res.Err,
		Time: time.Now(), AllPolicies: len(run.so.Policies) == 0,
	})
	if len(run.buf) >= run.s.opts.SinkBatch {
		return run.flush(ctx)
	}
	return nil
}

// replayed applies the answer of a generateExisting replay (p.generate
// set) or of a mutateExisting one.
func (run *scanRun) replayed(ctx context.Context, p *pending, res client.Result) error {
	g := run.s.opts.Generator
	what, apply, policies, count := "generateExisting", g.Apply, p.generate, &run.sum.Generated
	if p.generate == nil {
		what, apply, policies, count = "mutateExisting", g.ApplyTargets, p.mutate, &run.sum.Mutated
	}
	if res.Err != nil {
		run.s.opts.Logger.Warn(what+" not evaluated", "resource", describeResource(p.r), "error", res.Err)
		return nil
	}
	n, err := apply(ctx, p.r, policies, res.Response)
	*count += n
	if n > 0 && p.generate != nil {
		run.sum.Triggers++
	}
	if err != nil {
		run.s.opts.Logger.Warn(what+" not applied", "resource", describeResource(p.r), "error", err)
	}
	return nil
}

func (run *scanRun) flush(ctx context.Context) error {
	if len(run.buf) == 0 || run.s.opts.Sink == nil {
		return nil
	}
	err := run.s.opts.Sink.Write(ctx, run.buf)
	run.buf = nil
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
