package kubelookup

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Defaults of the global context (Options).
const (
	// DefaultMaxGlobalContextEntries bounds the GlobalContextEntries
	// held; those past it are errors.
	DefaultMaxGlobalContextEntries = 256
	// DefaultGlobalContextMinRefresh is the shortest refreshInterval of
	// an apiCall entry: a shorter one is raised to it.
	DefaultGlobalContextMinRefresh = 10 * time.Second

	// The CRD's defaults of apiCall entries.
	defaultRefreshInterval = 10 * time.Minute
	defaultRetryLimit      = 3
	// maxRetryLimit bounds the attempts of one refresh.
	maxRetryLimit = 10
)

// GlobalContextEntries is the resource of kyverno.io GlobalContextEntries,
// at the first version of globalContextVersions the cluster serves.
const GlobalContextEntries = "globalcontextentries"

// globalContextVersions are the versions of GlobalContextEntry read, in
// order of preference (Kyverno 1.19 stores v2beta1 and serves v2 and
// v2alpha1 too).
var globalContextVersions = []string{"v2beta1", "v2", "v2alpha1"}

// gcSpec is the spec of a GlobalContextEntry (the fields of every served
// version).
type gcSpec struct {
	KubernetesResource *struct {
		Group     string `json:"group"`
		Version   string `json:"version"`
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"kubernetesResource"`
	APICall *struct {
		URLPath string `json:"urlPath"`
		Method  string `json:"method"`
		Data    []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"data"`
		Service *struct {
			URL      string `json:"url"`
			CABundle string `json:"caBundle"`
			Headers  []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"headers"`
		} `json:"service"`
		RefreshInterval string `json:"refreshInterval"`
		RetryLimit      *int   `json:"retryLimit"`
	} `json:"apiCall"`
	Projections []struct {
		Name     string `json:"name"`
		JMESPath string `json:"jmesPath"`
	} `json:"projections"`
}

// gcEntry is the data of one GlobalContextEntry.
type gcEntry interface {
	// get returns the data, or that of a projection.
	get(projection string) (any, error)
	stop()
}

// invalidEntry is an entry that could not be set up: every read is its
// error, as Kyverno's invalid entries.
type invalidEntry struct{ err error }

func (e invalidEntry) get(string) (any, error) {
	return nil, fmt.Errorf("failed to create cached context entry: %w", e.err)
}
func (invalidEntry) stop() {}

// globalContext holds the GlobalContextEntries of the cluster: the
// objects of a kubernetesResource entry from an informer, the answer of
// an apiCall entry refreshed every refreshInterval, and the projections
// of both.
type globalContext struct {
	l  *Lookup
	jp *jmespath.Interpreter

	mu      sync.RWMutex
	entries map[string]*gcHandle // by name; guarded by mu
}

type gcHandle struct {
	spec  [sha256.Size]byte // of the spec the entry was made from
	entry gcEntry
}

func newGlobalContext(l *Lookup) *globalContext {
	return &globalContext{l: l, jp: jmespath.New(jmespath.Options{}), entries: map[string]*gcHandle{}}
}

// run watches the GlobalContextEntries until ctx ends. While the cluster
// serves none of their versions (the CRD is not installed) it looks again
// every DiscoveryInterval.
func (g *globalContext) run(ctx context.Context) {
	var gvr schema.GroupVersionResource
	for {
		var ok bool
		if gvr, ok = g.served(); ok {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(g.l.opts.DiscoveryInterval):
		}
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(g.l.opts.Dynamic, gvr, "", 0, cache.Indexers{}, nil).Informer()
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		g.l.opts.Logger.WarnContext(ctx, "GlobalContextEntry watch failed; retrying", "error", err)
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.set(ctx, obj) },
		UpdateFunc: func(_, obj any) { g.set(ctx, obj) },
		DeleteFunc: func(obj any) { g.remove(obj) },
	})
	inf.RunWithContext(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, h := range g.entries {
		h.entry.stop()
		delete(g.entries, name)
	}
}

// served returns the resource of the first version of
// globalContextVersions the cluster serves.
func (g *globalContext) served() (schema.GroupVersionResource, bool) {
	for _, v := range globalContextVersions {
		list, err := g.l.opts.Kube.Discovery().ServerResourcesForGroupVersion("kyverno.io/" + v)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == GlobalContextEntries {
				return schema.GroupVersionResource{Group: "kyverno.io", Version: v, Resource: GlobalContextEntries}, true
			}
		}
	}
	g.l.opts.Logger.Warn("GlobalContextEntries are not served (is the CRD installed?); globalContext.Get and globalReference context entries fail until they are",
		"retry", g.l.opts.DiscoveryInterval)
	return schema.GroupVersionResource{}, false
}

// set makes (or replaces) the entry of a GlobalContextEntry whose spec
// changed.
func (g *globalContext) set(ctx context.Context, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name := u.GetName()
	raw, err := json.Marshal(u.Object["spec"])
	if err != nil {
		raw = nil
	}
	sum := sha256.Sum256(raw)
	g.mu.RLock()
	old := g.entries[name]
	full := old == nil && len(g.entries) >= g.l.opts.MaxGlobalContextEntries
	g.mu.RUnlock()
	if old != nil && old.spec == sum {
		return // a status or metadata change
	}
	var e gcEntry
	switch {
	case full:
		e = invalidEntry{fmt.Errorf("the server holds %d GlobalContextEntries, the limit (--max-global-context-entries)", g.l.opts.MaxGlobalContextEntries)}
	case err != nil:
		e = invalidEntry{err}
	default:
		e = g.newEntry(ctx, name, raw)
	}
	if inv, ok := e.(invalidEntry); ok {
		g.l.opts.Logger.Warn("GlobalContextEntry not loaded", "name", name, "error", inv.err)
	} else {
		g.l.opts.Logger.Info("GlobalContextEntry loaded", "name", name)
	}
	g.mu.Lock()
	g.entries[name] = &gcHandle{spec: sum, entry: e}
	g.mu.Unlock()
	if old != nil {
		old.entry.stop()
	}
}

func (g *globalContext) remove(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	g.mu.Lock()
	h := g.entries[u.GetName()]
	delete(g.entries, u.GetName())
	g.mu.Unlock()
	if h != nil {
		h.entry.stop()
		g.l.opts.Logger.Info("GlobalContextEntry removed", "name", u.GetName())
	}
}

// projection is a compiled projection of an entry.
type projection struct {
	name string
	q    *jmespath.Query
}

// newEntry checks a spec and starts its entry; a spec that is not valid
// gives an invalid entry with the reason.
func (g *globalContext) newEntry(ctx context.Context, name string, raw []byte) gcEntry {
	var spec gcSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return invalidEntry{fmt.Errorf("spec: %w", err)}
	}
	var projs []projection
	seen := map[string]bool{}
	for i, p := range spec.Projections {
		switch {
		case p.Name == "" || p.Name == name || seen[p.Name]:
			return invalidEntry{fmt.Errorf("spec.projections[%d].name %q: a projection needs a name of its own, different from the entry's", i, p.Name)}
		case strings.Contains(p.Name, "."):
			return invalidEntry{fmt.Errorf("spec.projections[%d].name %q: a projection name has no dot (globalReference names it as entry.projection)", i, p.Name)}
		}
		seen[p.Name] = true
		q, err := jmespath.Parse(p.JMESPath)
		if err != nil {
			return invalidEntry{fmt.Errorf("spec.projections[%d].jmesPath: %w", i, err)}
		}
		projs = append(projs, projection{name: p.Name, q: q})
	}
	switch {
	case (spec.KubernetesResource == nil) == (spec.APICall == nil):
		return invalidEntry{errors.New("spec: exactly one of kubernetesResource and apiCall is required")}
	case spec.KubernetesResource != nil:
		kr := spec.KubernetesResource
		if kr.Version == "" || kr.Resource == "" {
			return invalidEntry{errors.New("spec.kubernetesResource: version and resource are required")}
		}
		gvr := schema.GroupVersionResource{Group: kr.Group, Version: kr.Version, Resource: kr.Resource}
		return g.newResourceEntry(ctx, name, gvr, kr.Namespace, projs)
	}
	ac := spec.APICall
	call := eval.APICall{URLPath: ac.URLPath, Method: ac.Method}
	if ac.Service != nil {
		call.ServiceURL, call.CABundle = ac.Service.URL, ac.Service.CABundle
		for _, h := range ac.Service.Headers {
			if call.Headers == nil {
				call.Headers = map[string]string{}
			}
			call.Headers[h.Key] = h.Value
		}
	}
	if (call.URLPath == "") == (call.ServiceURL == "") {
		return invalidEntry{errors.New("spec.apiCall: exactly one of urlPath and service.url is required")}
	}
	if len(ac.Data) > 0 {
		call.Data = map[string]any{}
		for _, d := range ac.Data {
			call.Data[d.Key] = d.Value
		}
	}
	interval := defaultRefreshInterval
	if ac.RefreshInterval != "" {
		d, err := time.ParseDuration(ac.RefreshInterval)
		if err != nil || d <= 0 {
			return invalidEntry{fmt.Errorf("spec.apiCall.refreshInterval %q: a positive duration is required", ac.RefreshInterval)}
		}
		interval = d
	}
	interval = max(interval, g.l.opts.GlobalContextMinRefresh)
	retries := defaultRetryLimit
	if ac.RetryLimit != nil {
		if *ac.RetryLimit < 1 {
			return invalidEntry{fmt.Errorf("spec.apiCall.retryLimit %d: at least 1", *ac.RetryLimit)}
		}
		retries = min(*ac.RetryLimit, maxRetryLimit)
	}
	return g.newAPIEntry(ctx, name, call, interval, retries, projs)
}

// GlobalReference implements kyvernocel.GlobalContext (globalContext.Get
// of the CEL library): the data of the entry, or of one of its
// projections; null for an entry that does not exist, as in Kyverno.
func (g *globalContext) GlobalReference(_ context.Context, name, projection string) (any, error) {
	g.mu.RLock()
	h := g.entries[name]
	g.mu.RUnlock()
	if h == nil {
		return nil, nil
	}
	return h.entry.get(projection)
}

// lookup is eval.Lookup.GlobalContext (the globalReference context
// entry): name is the entry's, or "entry.projection".
func (g *globalContext) lookup(name string) (any, error) {
	entry, proj, _ := strings.Cut(name, ".")
	proj, _, _ = strings.Cut(proj, ".")
	g.mu.RLock()
	h := g.entries[entry]
	g.mu.RUnlock()
	if h == nil {
		return nil, fmt.Errorf("failed to fetch entry key=%s: GlobalContextEntry %s %w", entry, entry, engine.ErrNotFound)
	}
	return h.entry.get(proj)
}

var _ kyvernocel.GlobalContext = (*globalContext)(nil)

// resourceEntry is a kubernetesResource entry: the objects of an informer,
// at most MaxListObjects of them (past it, the informer stops and the
// entry is an error: the memory an entry holds is bounded).
type resourceEntry struct {
	g      *globalContext
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc
	projs  []projection

	mu        sync.Mutex
	err       error          // set when the entry stopped for good
	dirty     bool           // the objects changed since projected
	projected map[string]any // by projection name
	projErrs  map[string]error
}

func (g *globalContext) newResourceEntry(ctx context.Context, name string, gvr schema.GroupVersionResource, namespace string, projs []projection) gcEntry {
	ctx, cancel := context.WithCancel(ctx)
	inf := dynamicinformer.NewFilteredDynamicInformer(g.l.opts.Dynamic, gvr, namespace, 0, cache.Indexers{}, nil).Informer()
	e := &resourceEntry{g: g, inf: inf, cancel: cancel, projs: projs, dirty: true}
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		g.l.opts.Logger.WarnContext(ctx, "GlobalContextEntry watch failed; retrying", "name", name, "resource", gvr.String(), "error", err)
	})
	changed := func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.dirty = true
		if n := len(inf.GetStore().ListKeys()); n > g.l.opts.MaxListObjects && e.err == nil {
			e.err = fmt.Errorf("GlobalContextEntry %s: %s holds more than %d objects, the limit; the entry is not kept", name, gvr.String(), g.l.opts.MaxListObjects)
			g.l.opts.Logger.Warn("GlobalContextEntry stopped", "name", name, "error", e.err)
			cancel()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(_, _ any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	go inf.RunWithContext(ctx)
	return e
}

func (e *resourceEntry) stop() { e.cancel() }

// objects lists the objects of the informer.
func (e *resourceEntry) objects() []any {
	items := e.inf.GetStore().List()
	out := make([]any, 0, len(items))
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok {
			out = append(out, u.Object)
		}
	}
	return out
}

func (e *resourceEntry) get(projection string) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	if !e.inf.HasSynced() {
		return nil, errors.New("the entry's objects are not listed yet")
	}
	if projection == "" {
		return e.objects(), nil
	}
	if e.dirty {
		list := e.objects()
		e.projected, e.projErrs = map[string]any{}, map[string]error{}
		for _, p := range e.projs {
			v, err := e.g.jp.Search(p.q, list)
			if err != nil {
				e.projErrs[p.name] = fmt.Errorf("failed to apply projection %q: %w", p.name, err)
				continue
			}
			e.projected[p.name] = v
		}
		e.dirty = false
	}
	if err := e.projErrs[projection]; err != nil {
		return nil, err
	}
	v, ok := e.projected[projection]
	if !ok {
		return nil, fmt.Errorf("projection %q not found", projection)
	}
	return v, nil
}

// apiEntry is an apiCall entry: the answer of the call, made at once and
// then every refresh interval, with its retries.
type apiEntry struct {
	cancel   context.CancelFunc
	interval time.Duration

	mu   sync.Mutex
	data map[string]any // "" and the projections
	err  error
}

func (g *globalContext) newAPIEntry(ctx context.Context, name string, call eval.APICall, interval time.Duration, retries int, projs []projection) gcEntry {
	ctx, cancel := context.WithCancel(ctx)
	e := &apiEntry{cancel: cancel, interval: interval}
	go func() {
		for {
			data, err := g.callWithRetries(ctx, call, retries)
			if ctx.Err() != nil {
				return
			}
			e.set(g, data, err, projs)
			if err != nil {
				g.l.opts.Logger.Warn("GlobalContextEntry refresh failed", "name", name, "error", err, "retry", interval)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
		}
	}()
	return e
}

// callWithRetries makes the call, up to retries times, with a backoff
// from 100ms doubling between attempts.
func (g *globalContext) callWithRetries(ctx context.Context, call eval.APICall, retries int) (any, error) {
	wait := 100 * time.Millisecond
	var err error
	for i := range retries {
		var v any
		if v, err = g.l.APICall(ctx, call); err == nil {
			return v, nil
		}
		if i == retries-1 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return nil, fmt.Errorf("%d attempts: %w", retries, err)
}

func (e *apiEntry) set(g *globalContext, data any, err error, projs []projection) {
	out := map[string]any{"": data}
	if err == nil {
		for _, p := range projs {
			v, perr := g.jp.Search(p.q, data)
			if perr != nil {
				err = fmt.Errorf("failed to apply projection %q: %w", p.name, perr)
				break
			}
			out[p.name] = v
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.err = err
		return
	}
	e.data, e.err = out, nil
}

func (e *apiEntry) get(projection string) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	v := e.data[projection]
	if v == nil {
		return nil, errors.New("no data available")
	}
	return v, nil
}

// stop ends the refreshes (a call in progress ends at its deadline, or
// now when it is waiting).
func (e *apiEntry) stop() { e.cancel() }
