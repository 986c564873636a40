package scanner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/internal/options"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// Defaults of WatchOptions.
const (
	DefaultWatchDelay  = time.Second
	DefaultWatchBatch  = 1000
	DefaultSyncTimeout = 2 * time.Minute
	DefaultStopGrace   = 10 * time.Second
	maxRetryBackoff    = 30 * time.Second
)

// WatchOptions configure Watch.
type WatchOptions struct {
	// Delay bounds how long a change waits: the changes seen within Delay
	// of the oldest pending one are evaluated together, in one round.
	// Default 1s.
	Delay time.Duration
	// MaxBatch is the most changes of one round; a round starts early
	// when that many are pending. Default 1000.
	MaxBatch int
	// Interval, when set, repeats the full scan (from the watch caches,
	// with its ScanDone) every Interval. Default: only the first.
	Interval time.Duration
	// PolicyPoll is how often the server's policy versions are read; a
	// policy that is new or changed is rescanned alone, and the kinds
	// watched follow the policies. Default 30s.
	PolicyPoll time.Duration
	// SyncTimeout bounds the first list of a kind (a kind the scanner may
	// not list or watch never syncs). Default 2m.
	SyncTimeout time.Duration
	// StopGrace is how long, once ctx ends, the changes already seen may
	// take to be evaluated and handed to the sink. Default 10s.
	StopGrace time.Duration
	// Scanned, when set, is called after the first scan, every full scan
	// and every policy rescan, as RunOptions.Scanned.
	Scanned func(sum Summary, rescanned []string, err error)
	// Round, when set, is called after every round of watched changes
	// that evaluated or deleted something.
	Round func(sum Summary, err error)
}

func (o WatchOptions) withDefaults() WatchOptions {
	options.Positive(&o.Delay, DefaultWatchDelay)
	options.Positive(&o.MaxBatch, DefaultWatchBatch)
	options.Positive(&o.PolicyPoll, DefaultPolicyPoll)
	options.Positive(&o.SyncTimeout, DefaultSyncTimeout)
	options.Positive(&o.StopGrace, DefaultStopGrace)
	return o
}

// Watch scans the shard of the cluster and then follows it until ctx
// ends. It watches (client-go informers) the namespaces and the kinds the
// server's policies match; the first scan, and every Interval, evaluates
// everything the watch caches hold and ends with a ScanDone. Then:
//
//   - an added or changed resource of the shard is evaluated, unless
//     nothing a policy sees changed since it was last evaluated (see
//     contentHash: status, resourceVersion, managedFields and the other
//     metadata apart from labels and annotations are not looked at);
//   - a deleted resource is handed to the sink as a Result with Deleted;
//   - a namespace whose labels change has its resources evaluated again
//     (namespaceSelector);
//   - changes wait at most opts.Delay and go in rounds of at most
//     opts.MaxBatch, one round at a time, so a deletion is always handed
//     to the sink after the evaluations of the resource;
//   - every opts.PolicyPoll the policy versions are read; the policies
//     that are new or changed are rescanned alone, as Run does, and the
//     kinds watched follow the policies.
//
// A round that fails (the server is down) is tried again with backoff.
// When ctx ends, the watches stop, the changes already seen are evaluated
// within opts.StopGrace, and Watch returns nil. It returns an error when
// the first scan cannot run.
func (s *Scanner) Watch(ctx context.Context, c *Cluster, opts WatchOptions) error {
	if c == nil {
		return errors.New("watch: no cluster")
	}
	opts = opts.withDefaults()
	w := &watcher{
		s: s, c: c, opts: opts, shard: s.opts.Shard.Normal(),
		kinds:  map[schema.GroupVersionResource]*kindWatch{},
		last:   map[string]string{},
		queue:  map[string]*change{},
		notify: make(chan struct{}, 1),
	}
	defer w.stopWatches()
	// The work of a round goes on for StopGrace after ctx ends.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(opts.StopGrace, cancelWork)
		context.AfterFunc(work, func() { t.Stop() })
	})
	defer stopGrace()

	set, err := LoadPolicies(ctx, s.c)
	if err != nil {
		return err
	}
	if err := w.watchNamespaces(ctx); err != nil {
		return err
	}
	if err := w.follow(ctx, set); err != nil {
		return err
	}
	report := func(sum Summary, rescanned []string, err error) {
		if opts.Scanned != nil {
			opts.Scanned(sum, rescanned, err)
		}
	}
	full := func() error {
		sum, err := w.scan(ctx, w.source(true, nil), set, ScanOptions{mode: modeFull})
		report(sum, nil, err)
		return err
	}
	if err := full(); err != nil {
		return err
	}

	var fullC <-chan time.Time
	if opts.Interval > 0 {
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		fullC = t.C
	}
	pollT := time.NewTicker(opts.PolicyPoll)
	defer pollT.Stop()
	var notBefore time.Time // backoff after a failed round
	backoff := opts.Delay
	for {
		var (
			roundC <-chan time.Time
			timer  *time.Timer
		)
		if n, oldest := w.pending(); n > 0 {
			at := oldest.Add(opts.Delay)
			if n >= opts.MaxBatch {
				at = time.Now()
			}
			if at.Before(notBefore) {
				at = notBefore
			}
			timer = time.NewTimer(time.Until(at))
			roundC = timer.C
		}
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			w.stopWatches()
			for n, _ := w.pending(); n > 0 && work.Err() == nil; n, _ = w.pending() {
				if _, err := w.round(work, set); err != nil {
					s.opts.Logger.Warn("watch: changes not reported at stop", "pending", n, "error", err)
					break
				}
			}
			return nil
		case <-w.notify:
			stop()
		case <-roundC:
			sum, err := w.round(work, set)
			if err != nil {
				notBefore = time.Now().Add(backoff)
				backoff = min(backoff*2, maxRetryBackoff)
				s.opts.Logger.Warn("watch: round failed, retrying", "error", err, "retry", notBefore.Format(time.RFC3339))
			} else {
				backoff = opts.Delay
			}
			if opts.Round != nil && (err != nil || sum.Resources+sum.Deleted > 0) {
				opts.Round(sum, err)
			}
		case <-fullC:
			stop()
			if err := full(); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("scan failed", "error", err)
			}
		case <-pollT.C:
			stop()
			next, ok := s.pollPolicies(ctx)
			if !ok {
				continue
			}
			changed := Changed(set, next)
			kindsChanged := !slices.Equal(set.Kinds(), next.Kinds())
			set = next
			if kindsChanged {
				if err := w.follow(ctx, set); err != nil {
					s.opts.Logger.Warn("watch: kinds of the policies", "error", err)
				}
			}
			if len(changed) == 0 {
				continue
			}
			sub := set.Only(changed)
			sum, err := w.scan(ctx, w.source(false, sub.Kinds()), sub, ScanOptions{Policies: changed, mode: modePolicy})
			report(sum, changed, err)
			if err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("policy rescan failed", "policies", changed, "error", err)
			}
		}
	}
}

// watcher is the state of one Watch.
type watcher struct {
	s     *Scanner
	c     *Cluster
	opts  WatchOptions
	shard Shard

	namespaces cache.SharedIndexInformer
	nsCancel   context.CancelFunc
	// kinds are the watched kinds; changed by the goroutine of Watch only.
	kinds map[schema.GroupVersionResource]*kindWatch

	mu sync.Mutex
	// last maps a resource's key (its UID) to the content hash of its
	// last evaluation.
	last map[string]string
	// queue holds the latest change of each resource, by key.
	queue  map[string]*change
	notify chan struct{} // a change was queued
}

// kindWatch is the informer of one kind.
type kindWatch struct {
	res    apiResource
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc
}

// change is a resource to evaluate, or a deletion to report.
type change struct {
	r       *Resource
	deleted bool
	force   bool // evaluate even if its content hash is the last one
	since   time.Time
}

// pending is the number of queued changes and the time of the oldest.
func (w *watcher) pending() (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var oldest time.Time
	for _, c := range w.queue {
		if oldest.IsZero() || c.since.Before(oldest) {
			oldest = c.since
		}
	}
	return len(w.queue), oldest
}

func (w *watcher) enqueue(typ string, c *change) {
	key := c.r.key()
	w.mu.Lock()
	if !c.deleted && !c.force && w.last[key] == c.r.hash {
		if old := w.queue[key]; old != nil && !old.deleted {
			// Changed and changed back before its round.
			delete(w.queue, key)
		}
		n := len(w.queue)
		w.mu.Unlock()
		w.s.metrics.setPending(n)
		w.s.metrics.event(typ, "skipped")
		return
	}
	if old := w.queue[key]; old != nil {
		c.since = old.since
		c.force = c.force || old.force
	}
	w.queue[key] = c
	n := len(w.queue)
	w.mu.Unlock()
	w.s.metrics.setPending(n)
	w.s.metrics.event(typ, "queued")
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// key identifies a resource in a watch: its UID.
func (r *Resource) key() string {
	if r.UID != "" {
		return r.UID
	}
	return r.Ref().String()
}

// object turns an informer's object into a Resource of the shard; ok is
// false for anything else.
func (w *watcher) object(obj any) (*Resource, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !w.shard.Owns(u.GetNamespace()) {
		return nil, false
	}
	return resourceOf(u.Object), true
}

// handlers are the event handlers of the informer of gvr.
func (w *watcher) handlers(gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	changed := func(typ string, obj any) {
		r, ok := w.object(obj)
		if !ok {
			return
		}
		r.GVR = gvr
		r.hash = contentHash(r.Object)
		w.enqueue(typ, &change{r: r, since: time.Now()})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { changed("add", obj) },
		UpdateFunc: func(_, obj any) { changed("update", obj) },
		DeleteFunc: func(obj any) {
			r, ok := w.object(obj)
			if !ok {
				return
			}
			w.enqueue("delete", &change{r: r, deleted: true, since: time.Now()})
		},
	}
}

// stub keeps what a watch needs of an object of another shard: its
// identity, not its content.
func (w *watcher) stub(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || w.shard.Owns(u.GetNamespace()) {
		return obj, nil
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(),
		"kind":       u.GetKind(),
		"metadata": map[string]any{
			"name": u.GetName(), "namespace": u.GetNamespace(),
			"uid": string(u.GetUID()), "resourceVersion": u.GetResourceVersion(),
		},
	}}, nil
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// watchNamespaces starts the informer of the namespaces (their labels).
// A namespace of the shard whose labels change has its resources
// evaluated again.
func (w *watcher) watchNamespaces(ctx context.Context) error {
	inf := dynamicinformer.NewFilteredDynamicInformer(w.c.opts.Client, namespacesGVR, "", 0, cache.Indexers{}, nil).Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if !ok1 || !ok2 || maps.Equal(o.GetLabels(), n.GetLabels()) || !w.shard.Owns(n.GetName()) {
				return
			}
			w.relabelled(n.GetName())
		},
	})
	if err != nil {
		return fmt.Errorf("watch namespaces: %w", err)
	}
	ictx, cancel := context.WithCancel(ctx)
	go inf.RunWithContext(ictx)
	w.namespaces, w.nsCancel = inf, cancel
	return w.waitSynced(ctx, "namespaces", inf)
}

// relabelled queues the resources of namespace ns for evaluation.
func (w *watcher) relabelled(ns string) {
	w.mu.Lock()
	var infs []cache.SharedIndexInformer
	for _, k := range w.kinds {
		if k.res.namespaced {
			infs = append(infs, k.inf)
		}
	}
	w.mu.Unlock()
	for _, inf := range infs {
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if r, ok := w.object(obj); ok {
				r.hash = contentHash(r.Object)
				w.enqueue("update", &change{r: r, force: true, since: time.Now()})
			}
		}
	}
}

func (w *watcher) waitSynced(ctx context.Context, what string, inf cache.SharedIndexInformer) error {
	sctx, cancel := context.WithTimeout(ctx, w.opts.SyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("watch %s: not listed within %v (can the scanner list and watch it?)", what, w.opts.SyncTimeout)
	}
	return nil
}

// follow makes the kinds watched those of set: it starts the informers
// of new kinds and waits until they listed, and stops those of kinds no
// policy matches any more.
func (w *watcher) follow(ctx context.Context, set *PolicySet) error {
	if d, ok := w.c.opts.Discovery.(discovery.CachedDiscoveryInterface); ok {
		d.Invalidate() // CRDs may have come or gone
	}
	for _, p := range set.Wildcard {
		w.s.opts.Logger.Warn("policy matches kind *: a cluster scan watches only the kinds named in policies", "policy", p)
	}
	res, err := (&clusterSource{c: w.c, kinds: set.Kinds()}).resources()
	if err != nil {
		return err
	}
	want := map[schema.GroupVersionResource]apiResource{}
	for _, r := range res {
		if !r.namespaced && !w.shard.Owns("") {
			continue // cluster-scoped resources are another shard's
		}
		want[r.gvr] = r
	}
	var errs []error
	for gvr, r := range want {
		if w.kinds[gvr] != nil {
			continue
		}
		indexers := cache.Indexers{}
		if r.namespaced {
			indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
		}
		inf := dynamicinformer.NewFilteredDynamicInformer(w.c.opts.Client, gvr, "", 0, indexers, nil).Informer()
		if w.shard.Count > 1 && r.namespaced {
			if err := inf.SetTransform(w.stub); err != nil {
				return fmt.Errorf("watch %s: %w", gvr, err)
			}
		}
		if _, err := inf.AddEventHandler(w.handlers(gvr)); err != nil {
			return fmt.Errorf("watch %s: %w", gvr, err)
		}
		ictx, cancel := context.WithCancel(ctx)
		go inf.RunWithContext(ictx)
		k := &kindWatch{res: r, inf: inf, cancel: cancel}
		if err := w.waitSynced(ctx, gvr.String(), inf); err != nil {
			cancel()
			errs = append(errs, err)
			continue
		}
		w.mu.Lock()
		w.kinds[gvr] = k
		w.mu.Unlock()
	}
	for gvr, k := range w.kinds {
		if _, ok := want[gvr]; ok {
			continue
		}
		k.cancel()
		w.mu.Lock()
		delete(w.kinds, gvr)
		for _, obj := range k.inf.GetStore().List() {
			if r, ok := w.object(obj); ok {
				delete(w.last, r.key())
			}
		}
		w.mu.Unlock()
	}
	return errors.Join(errs...)
}

// stopWatches stops every informer; safe to call more than once.
func (w *watcher) stopWatches() {
	if w.nsCancel != nil {
		w.nsCancel()
	}
	for _, k := range w.kinds {
		k.cancel()
	}
}

// namespaceLabels are the labels of namespace ns, from the watch.
func (w *watcher) namespaceLabels(ns string) map[string]string {
	if ns == "" || w.namespaces == nil {
		return nil
	}
	obj, ok, err := w.namespaces.GetStore().GetByKey(ns)
	if err != nil || !ok {
		return nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.GetLabels()
	}
	return nil
}

// scan runs one scan and records the content hash of what the server
// evaluated, once the results are in the sink.
func (w *watcher) scan(ctx context.Context, src Source, set *PolicySet, so ScanOptions) (Summary, error) {
	var evaluated []*Resource
	if len(so.Policies) == 0 {
		so.evaluated = func(r *Resource) { evaluated = append(evaluated, r) }
	}
	sum, err := w.s.Scan(ctx, src, set, so)
	if err != nil {
		return sum, err
	}
	w.mu.Lock()
	for _, r := range evaluated {
		w.last[r.key()] = r.hash
	}
	w.mu.Unlock()
	return sum, nil
}

// round evaluates up to MaxBatch queued changes and reports the
// deletions among them, after the evaluations. What fails goes back to
// the queue, unless a newer change of the resource came meanwhile.
func (w *watcher) round(ctx context.Context, set *PolicySet) (Summary, error) {
	w.mu.Lock()
	var batch []*change
	for key, c := range w.queue {
		if len(batch) == w.opts.MaxBatch {
			break
		}
		delete(w.queue, key)
		if !c.deleted && !c.force && w.last[key] == c.r.hash {
			continue // evaluated meanwhile (by a full scan)
		}
		batch = append(batch, c)
	}
	n := len(w.queue)
	w.mu.Unlock()
	w.s.metrics.setPending(n)
	sort.Slice(batch, func(i, j int) bool { return batch[i].since.Before(batch[j].since) })

	var evals []*Resource
	var deletes []*change
	for _, c := range batch {
		if c.deleted {
			deletes = append(deletes, c)
			continue
		}
		c.r.NamespaceLabels = w.namespaceLabels(c.r.Namespace)
		evals = append(evals, c.r)
	}
	sum := Summary{Shard: w.shard}
	if len(evals) > 0 {
		var err error
		sum, err = w.scan(ctx, sliceSource(evals), set, ScanOptions{partial: true, mode: modeWatch})
		if err != nil {
			w.requeue(batch)
			return sum, err
		}
	}
	if len(deletes) > 0 && w.s.opts.Sink != nil {
		now := time.Now()
		rs := make([]Result, len(deletes))
		for i, c := range deletes {
			rs[i] = Result{Resource: c.r.Ref(), Time: now, Deleted: true}
		}
		if err := w.s.opts.Sink.Write(ctx, rs); err != nil {
			w.requeue(deletes)
			return sum, fmt.Errorf("write deletions: %w", err)
		}
	}
	w.mu.Lock()
	for _, c := range deletes {
		delete(w.last, c.r.key())
	}
	w.mu.Unlock()
	sum.Deleted = len(deletes)
	for _, c := range batch {
		w.s.metrics.handled(c.since, c.deleted)
	}
	return sum, nil
}

func (w *watcher) requeue(cs []*change) {
	w.mu.Lock()
	for _, c := range cs {
		if key := c.r.key(); w.queue[key] == nil {
			w.queue[key] = c
		}
	}
	n := len(w.queue)
	w.mu.Unlock()
	w.s.metrics.setPending(n)
}

// sliceSource is a Source of resources already read.
type sliceSource []*Resource

func (s sliceSource) List(_ context.Context, _ Shard, v Visitor) error {
	v.Expect(len(s))
	for _, r := range s {
		if err := v.Visit(r); err != nil {
			return err
		}
	}
	return nil
}

// source is a Source of what the watch caches hold: of every kind
// watched, or of kinds.
func (w *watcher) source(all bool, kinds []Kind) Source {
	return &cacheSource{w: w, all: all, kinds: kinds}
}

type cacheSource struct {
	w     *watcher
	all   bool
	kinds []Kind
}

func (s *cacheSource) List(_ context.Context, _ Shard, v Visitor) error {
	w := s.w
	w.mu.Lock()
	var ks []*kindWatch
	for _, k := range w.kinds {
		if s.all || slices.ContainsFunc(s.kinds, func(kind Kind) bool { return kind.Matches(k.res.gvr.GroupVersion().String(), k.res.kind) }) {
			ks = append(ks, k)
		}
	}
	w.mu.Unlock()
	sort.Slice(ks, func(i, j int) bool { return ks[i].res.gvr.String() < ks[j].res.gvr.String() })
	for _, k := range ks {
		v.Kind(k.res.kind)
		var rs []*Resource
		for _, obj := range k.inf.GetStore().List() {
			if r, ok := w.object(obj); ok {
				rs = append(rs, r)
			}
		}
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].Namespace != rs[j].Namespace {
				return rs[i].Namespace < rs[j].Namespace
			}
			return rs[i].Name < rs[j].Name
		})
		v.Expect(len(rs))
		for _, r := range rs {
			r.hash = contentHash(r.Object)
			r.NamespaceLabels = w.namespaceLabels(r.Namespace)
			r.GVR = k.res.gvr
			if err := v.Visit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// contentHash is a hash of what a watch looks at to decide whether a
// changed resource is evaluated again, as Kyverno's reports controller
// decides it (CalculateResourceHash): the labels, the annotations and
// the object without metadata, status, scale and spec.nodeName. An
// update of the status only (a Pod's phase, a Deployment's replicas),
// of resourceVersion, generation or managedFields, or a Pod's binding to
// a node, is not evaluated.
func contentHash(obj map[string]any) string {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "metadata", "status", "scale":
			continue
		case "spec":
			if spec, ok := v.(map[string]any); ok {
				if _, ok := spec["nodeName"]; ok {
					spec = maps.Clone(spec)
					delete(spec, "nodeName")
					v = spec
				}
			}
		}
		rest[k] = v
	}
	b, err := json.Marshal([]any{objectLabels(obj), objectAnnotations(obj), rest})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
