package kubestore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/policyreport"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

// Defaults of Options.
const (
	DefaultFlushInterval  = time.Second
	DefaultMaxReportBytes = 512 << 10
	DefaultBackoffMin     = 200 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultConcurrency    = 4
	DefaultFieldManager   = "verdict"
	// DefaultMaxTombstoneBytes leaves room in the 256 KiB the API server
	// allows for the annotations of an object.
	DefaultMaxTombstoneBytes = 192 << 10
)

// Labels and annotations of the objects the store writes.
const (
	// LabelReport names the report a part belongs to (on every part).
	LabelReport = "reports.verdict.io/report"
	// AnnotationContentHash is the hash of the whole report's content.
	AnnotationContentHash = "reports.verdict.io/content-hash"
	// AnnotationPart is "i/n" on every part of a split report.
	AnnotationPart = "reports.verdict.io/part"
	// AnnotationTombstones, on the tombstone Lease, holds the deleted
	// resources: a JSON object of resource key to deletion time (Unix
	// nanoseconds).
	AnnotationTombstones = "reports.verdict.io/tombstones"
)

// The report resources.
var (
	PolicyReports        = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	ClusterPolicyReports = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
	Reports              = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	ClusterReports       = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
	Leases               = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// reportAPI is the API group of the report objects: its apiVersion, and
// the kind and resource of the namespaced and cluster-wide reports.
type reportAPI struct {
	apiVersion                        string
	namespaced, cluster               schema.GroupVersionResource
	namespacedKind, clusterKind, name string
}

var (
	wgpolicyAPI = reportAPI{
		apiVersion: policyreport.APIVersion, namespaced: PolicyReports, cluster: ClusterPolicyReports,
		namespacedKind: policyreport.KindPolicyReport, clusterKind: policyreport.KindClusterPolicyReport, name: "wgpolicyk8s.io",
	}
	openreportsAPI = reportAPI{
		apiVersion: policyreport.OpenReportsAPIVersion, namespaced: Reports, cluster: ClusterReports,
		namespacedKind: policyreport.KindReport, clusterKind: policyreport.KindClusterReport, name: "openreports.io",
	}
)

// kind is the kind of the object of report k.
func (a reportAPI) kind(k reportwriter.ReportKey) string {
	if k.Namespace == "" {
		return a.clusterKind
	}
	return a.namespacedKind
}

// resource is the resource of the objects of report k.
func (a reportAPI) resource(c dynamic.Interface, k reportwriter.ReportKey) dynamic.ResourceInterface {
	if k.Namespace == "" {
		return c.Resource(a.cluster)
	}
	return c.Resource(a.namespaced).Namespace(k.Namespace)
}

// Options configure Open. Local and Client are required.
type Options struct {
	// Local keeps the intermediary reports, tombstones, policy set and a
	// copy of the final reports. Required; closed by Close.
	Local *boltstore.Store
	// Client writes the report objects. Required.
	Client dynamic.Interface

	// ShardIndex and ShardCount: the store reads and writes the reports of
	// the namespaces with reportwriter.ShardOf(namespace, ShardCount) ==
	// ShardIndex only (cluster-scoped reports belong to the shard of "").
	// Default 0 of 1: every report.
	ShardIndex, ShardCount uint32

	// FlushInterval is the least time between two applies of one report.
	// Default 1s.
	FlushInterval time.Duration
	// MaxReportBytes bounds the JSON size of one report object; larger
	// reports are split into parts. Default 512 KiB (etcd takes requests
	// up to 1.5 MiB).
	MaxReportBytes int
	// BackoffMin and BackoffMax bound the wait before retrying failed API
	// writes; it doubles from min to max and is reset by a round without
	// failures. Defaults 200ms and 30s.
	BackoffMin, BackoffMax time.Duration
	// Concurrency is the most reports written to the API server at once.
	// Default 4.
	Concurrency int
	// RequestTimeout bounds one API call. Default 30s.
	RequestTimeout time.Duration
	// FieldManager of the server-side applies. Default "verdict".
	FieldManager string

	// TombstoneNamespace and TombstoneName name the coordination.k8s.io
	// Lease whose annotation reports.verdict.io/tombstones holds the
	// shard's tombstones (deleted resources), so that a standby that takes
	// the shard over refuses late resends of their older evaluations. It
	// is applied with the reports, coalesced in the same rounds. Default
	// "": tombstones stay in the local file only.
	TombstoneNamespace, TombstoneName string
	// MaxTombstoneBytes bounds the annotation of the tombstone Lease: the
	// newest tombstones that fit are handed over, the others only kept in
	// the local file (counted in verdict_reports_tombstones_left_out).
	// Default 192 KiB (about 3,000 resources identified by UID).
	MaxTombstoneBytes int

	// OpenReports writes openreports.io/v1alpha1 Report and ClusterReport
	// objects instead of wgpolicyk8s.io/v1alpha2 PolicyReport and
	// ClusterPolicyReport ones (Kyverno's --openreportsEnabled), with the
	// same names, labels and content. Default false: wgpolicyk8s.io, as
	// Kyverno 1.19's controllers. At Load, the shard's objects of the
	// other group written by Verdict are deleted; when the chosen group
	// has none of them yet, the state is first rebuilt from those (a
	// switch of group keeps every entry).
	OpenReports bool

	// Logger receives the store's logs. Default: discard.
	Logger *slog.Logger
	// Registry receives the store's metrics. Default: a new registry.
	Registry *prometheus.Registry
}

func (o Options) withDefaults() Options {
	if o.ShardCount == 0 {
		o.ShardCount, o.ShardIndex = 1, 0
	}
	options.Positive(&o.FlushInterval, DefaultFlushInterval)
	options.Positive(&o.MaxReportBytes, DefaultMaxReportBytes)
	options.Positive(&o.BackoffMin, DefaultBackoffMin)
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(DefaultBackoffMax, o.BackoffMin)
	}
	options.Positive(&o.Concurrency, DefaultConcurrency)
	options.Positive(&o.RequestTimeout, DefaultRequestTimeout)
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	options.Positive(&o.MaxTombstoneBytes, DefaultMaxTombstoneBytes)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.Registry = cmp.Or(o.Registry, prometheus.NewRegistry())
	return o
}

// metaApplied is the bbolt meta key of the applied hashes.
const metaApplied = "kubestore/applied"

// Store is a reportwriter.Store whose final reports are objects in the
// API server.
type Store struct {
	opts    Options
	local   *boltstore.Store
	log     *slog.Logger
	metrics *metrics

	mu sync.Mutex
	// pending are the reports to apply, or to delete: their content is
	// the local file's (every Write goes there first), read when they are
	// applied, so that the store holds the JSON of the few reports being
	// applied, never of every report changed.
	pending map[reportwriter.ReportKey]struct{}
	// seq numbers the Writes. pendingSeq (for pending) and inflight (for
	// the round in progress) hold, per report, the first Write whose
	// change of it is not applied yet; a pending report without one
	// predates every Write (Load). WaitDurable waits on them.
	seq        uint64
	pendingSeq map[reportwriter.ReportKey]uint64
	inflight   map[reportwriter.ReportKey]uint64
	// tombs are the tombstones of the shard; tombDirty and tombSeq (first
	// Write not applied), tombFlight and tombFlightSeq (in the round in
	// progress) track the tombstone Lease like pendingSeq and inflight.
	tombs                  map[string]time.Time
	tombDirty, tombFlight  bool
	tombSeq, tombFlightSeq uint64
	// applied is the content hash of each report in the API server, and
	// parts its number of parts there.
	applied map[reportwriter.ReportKey]string
	parts   map[reportwriter.ReportKey]int
	// rounds counts finished apply rounds; roundDone is closed and
	// replaced after each.
	rounds    uint64
	roundDone chan struct{}
	lastErr   error

	wake   chan struct{}
	now    chan struct{} // Flush: apply without waiting
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

var _ reportwriter.ReportReader = (*Store)(nil)

// Open returns a store on opts.Local and opts.Client; Load reads the
// shard's reports. Close stops it.
func Open(opts Options) (*Store, error) {
	opts = opts.withDefaults()
	switch {
	case opts.Local == nil:
		return nil, errors.New("kubestore: no local store")
	case opts.Client == nil:
		return nil, errors.New("kubestore: no client")
	case opts.ShardIndex >= opts.ShardCount:
		return nil, fmt.Errorf("kubestore: shard %d of %d: index out of range", opts.ShardIndex, opts.ShardCount)
	}
	m, err := newMetrics(opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{
		opts: opts, local: opts.Local, log: opts.Logger, metrics: m,
		pending:    map[reportwriter.ReportKey]struct{}{},
		pendingSeq: map[reportwriter.ReportKey]uint64{},
		inflight:   map[reportwriter.ReportKey]uint64{},
		tombs:      map[string]time.Time{},
		applied:    map[reportwriter.ReportKey]string{},
		parts:      map[reportwriter.ReportKey]int{},
		roundDone:  make(chan struct{}),
		wake:       make(chan struct{}, 1),
		now:        make(chan struct{}, 1),
		cancel:     cancel,
		done:       make(chan struct{}),
	}
	go s.run(ctx)
	return s, nil
}

// api is the group the reports are written to (Options.OpenReports).
func (s *Store) api() reportAPI {
	if s.opts.OpenReports {
		return openreportsAPI
	}
	return wgpolicyAPI
}

// other is the group whose objects Load removes.
func (s *Store) other() reportAPI {
	if s.opts.OpenReports {
		return wgpolicyAPI
	}
	return openreportsAPI
}

// owns reports whether the report of namespace ns is in the store's shard.
func (s *Store) owns(ns string) bool {
	return reportwriter.ShardOf(ns, s.opts.ShardCount) == s.opts.ShardIndex
}

// contentHash identifies a rendered report.
func contentHash(report []byte) string {
	h := sha256.Sum256(report)
	return hex.EncodeToString(h[:12])
}

// ReadReport implements reportwriter.ReportReader: the report as last
// written, from the local file (which holds the reports of the store's
// shard only).
func (s *Store) ReadReport(ctx context.Context, k reportwriter.ReportKey) ([]byte, error) {
	return s.local.ReadReport(ctx, k)
}

// Write implements reportwriter.Store: c is written to the local file in
// one transaction; its reports are applied to the API server by the apply
// loop. Reports of other shards are left out and counted.
func (s *Store) Write(ctx context.Context, c *reportwriter.Changes) error {
	own := *c
	own.PutReports, own.DeleteReports = nil, nil
	for _, sr := range c.PutReports {
		if s.owns(sr.Key.Namespace) {
			own.PutReports = append(own.PutReports, sr)
		} else {
			s.foreign(sr.Key)
		}
	}
	for _, k := range c.DeleteReports {
		if s.owns(k.Namespace) {
			own.DeleteReports = append(own.DeleteReports, k)
		} else {
			s.foreign(k)
		}
	}
	if err := s.local.Write(ctx, &own); err != nil {
		return err
	}
	tombs := s.opts.TombstoneName != "" && len(own.PutTombstones)+len(own.DeleteTombstones) > 0
	s.mu.Lock()
	s.seq++
	if len(own.PutReports)+len(own.DeleteReports) == 0 && !tombs {
		s.mu.Unlock()
		return nil
	}
	for _, sr := range own.PutReports {
		s.setPending(sr.Key)
	}
	for _, k := range own.DeleteReports {
		s.setPending(k)
	}
	if tombs {
		for k, t := range own.PutTombstones {
			s.tombs[k] = t
		}
		for _, k := range own.DeleteTombstones {
			delete(s.tombs, k)
		}
		if !s.tombDirty {
			s.tombDirty, s.tombSeq = true, s.seq
		}
	}
	s.metrics.pending.Set(float64(len(s.pending)))
	s.mu.Unlock()
	s.signal()
	return nil
}

// setPending marks report k to apply (or delete), changed by Write s.seq.
// s.mu is held.
func (s *Store) setPending(k reportwriter.ReportKey) {
	if _, ok := s.pendingSeq[k]; !ok {
		if _, fromLoad := s.pending[k]; fromLoad {
			s.pendingSeq[k] = 0
		} else {
			s.pendingSeq[k] = s.seq
		}
	}
	s.pending[k] = struct{}{}
}

// durableLocked is the last Write whose changes are all applied (-1:
// reports loaded before every Write are not). s.mu is held.
func (s *Store) durableLocked() int64 {
	low := int64(s.seq)
	for k := range s.pending {
		low = min(low, int64(s.pendingSeq[k])-1)
	}
	for _, q := range s.inflight {
		low = min(low, int64(q)-1)
	}
	if s.tombDirty {
		low = min(low, int64(s.tombSeq)-1)
	}
	if s.tombFlight {
		low = min(low, int64(s.tombFlightSeq)-1)
	}
	return low
}

// WaitDurable implements reportwriter.DeferredStore: it returns once the
// reports (and tombstones) of every Write that returned before the call
// are applied to the API server, or with an error when ctx is done or the
// store is closed first. A failing apply is retried meanwhile.
func (s *Store) WaitDurable(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := int64(s.seq)
	for s.durableLocked() < target {
		ch := s.roundDone
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			return ctx.Err()
		case <-s.done:
			s.mu.Lock()
			if s.durableLocked() >= target {
				return nil
			}
			return errors.New("kubestore closed")
		}
		s.mu.Lock()
	}
	return nil
}

func (s *Store) foreign(k reportwriter.ReportKey) {
	s.metrics.foreign.Inc()
	s.log.Warn("report of another shard not written", "kind", s.api().kind(k), "namespace", k.Namespace, "name", k.Name,
		"shard", fmt.Sprintf("%d/%d", s.opts.ShardIndex, s.opts.ShardCount))
}

func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Flush applies the pending reports now (waiting for the round in
// progress first) and returns the error of the last round, or ctx's.
func (s *Store) Flush(ctx context.Context) error {
	for range 2 { // the round in progress may have started before the call
		s.mu.Lock()
		if len(s.pending) == 0 && !s.tombDirty && s.lastErr == nil {
			s.mu.Unlock()
			return nil
		}
		ch := s.roundDone
		s.mu.Unlock()
		select {
		case s.now <- struct{}{}:
		default:
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return errors.New("kubestore closed")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if (len(s.pending) > 0 || s.tombDirty) && s.lastErr != nil {
		return s.lastErr
	}
	return nil
}

// Close applies what is pending (until ctx is done), stops the apply loop
// and closes the local store.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	defer cancel()
	return s.CloseContext(ctx)
}

// CloseContext is Close with a deadline for the last applies.
func (s *Store) CloseContext(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		err = s.Flush(ctx)
		s.cancel()
		<-s.done
		if cerr := s.local.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("reports not applied: %w", err)
		}
	})
	return err
}

// saveApplied records the applied hashes in the local file.
func (s *Store) saveApplied() error {
	s.mu.Lock()
	b, err := json.Marshal(appliedList(s.applied))
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.local.SetMeta(metaApplied, b)
}

type appliedEntry struct {
	Key  reportwriter.ReportKey `json:"key"`
	Hash string                 `json:"hash"`
}

func appliedList(m map[reportwriter.ReportKey]string) []appliedEntry {
	out := make([]appliedEntry, 0, len(m))
	for k, h := range m {
		out = append(out, appliedEntry{Key: k, Hash: h})
	}
	return out
}

func (s *Store) loadApplied() (map[reportwriter.ReportKey]string, error) {
	b, err := s.local.Meta(metaApplied)
	if err != nil || b == nil {
		return map[reportwriter.ReportKey]string{}, err
	}
	var list []appliedEntry
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("applied reports: %w", err)
	}
	m := make(map[reportwriter.ReportKey]string, len(list))
	for _, e := range list {
		m[e.Key] = e.Hash
	}
	return m, nil
}
