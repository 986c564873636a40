package kubelookup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/internal/options"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/verdict-policy/verdict/engine/eval"
)

// Defaults of Options.
const (
	DefaultCacheTTL          = 10 * time.Second
	DefaultCacheSize         = 1024
	DefaultAPICallTimeout    = 10 * time.Second
	DefaultMaxResponseBytes  = 10_000_000
	DefaultMaxListObjects    = 10_000
	DefaultDiscoveryInterval = 30 * time.Second
	DefaultServiceClients    = 32
)

// CacheLabel is the label of the ConfigMaps kept in the informer cache, as
// in Kyverno (any value).
const CacheLabel = "cache.kyverno.io/enabled"

// Options configure a Lookup. Kube, Dynamic and REST are required (New
// ForConfig builds all three from a rest.Config); every other field has a
// default, filled by withDefaults at the top of New.
type Options struct {
	// Kube reads ConfigMaps (informer and GETs) and serves discovery.
	Kube kubernetes.Interface
	// Dynamic reads Namespaces, params, clone sources and mutate targets.
	Dynamic dynamic.Interface
	// REST performs the urlPath API calls, with the server's identity;
	// it must speak JSON (NewForConfig's does).
	REST rest.Interface

	// CacheTTL is how long a ConfigMap or Namespace read with a GET (and
	// the fact that it does not exist) is reused. Default 10s.
	CacheTTL time.Duration
	// CacheSize bounds the ConfigMaps and the Namespaces kept from GETs
	// (each an LRU of this many entries). Default 1024.
	CacheSize int
	// APICallTimeout bounds each apiCall (urlPath and service). Default
	// 10s; the server's call deadline, when shorter, wins.
	APICallTimeout time.Duration
	// MaxResponseBytes bounds the body of an apiCall response; a larger
	// one is an error. Default 10,000,000 (Kyverno's admission
	// controller's maxAPICallResponseLength).
	MaxResponseBytes int64
	// MaxListObjects bounds the objects one Resources or Params list
	// returns; more is an error. Default 10,000.
	MaxListObjects int
	// DiscoveryInterval is the shortest time between two refreshes of the
	// API discovery cache caused by a kind it does not know. Default 30s.
	DiscoveryInterval time.Duration
	// ServiceClients bounds the HTTP clients kept for service calls, one
	// per CA bundle. Default 32.
	ServiceClients int
	// DisableGlobalContext: GlobalContextEntries are not read (Start does
	// not watch them); globalContext.Get and globalReference context
	// entries fail. Default false.
	DisableGlobalContext bool
	// MaxGlobalContextEntries bounds the GlobalContextEntries held; one
	// past it is an error for the policies that read it. Default 256. A
	// kubernetesResource entry holds at most MaxListObjects objects (past
	// it, it stops and is an error), an apiCall entry one response of at
	// most MaxResponseBytes.
	MaxGlobalContextEntries int
	// GlobalContextMinRefresh is the shortest refreshInterval of an
	// apiCall GlobalContextEntry; a shorter one is raised to it. Default
	// 10s.
	GlobalContextMinRefresh time.Duration
	// Logger receives informer and discovery errors. Default: discard.
	Logger *slog.Logger

	// now is the clock of the caches (a test seam). Default time.Now.
	now func() time.Time
	// transport is the base transport of service calls (a test seam).
	// Default: a clone of http.DefaultTransport.
	transport *http.Transport
}

func (o Options) withDefaults() Options {
	options.Positive(&o.CacheTTL, DefaultCacheTTL)
	options.Positive(&o.CacheSize, DefaultCacheSize)
	options.Positive(&o.APICallTimeout, DefaultAPICallTimeout)
	options.Positive(&o.MaxResponseBytes, DefaultMaxResponseBytes)
	options.Positive(&o.MaxListObjects, DefaultMaxListObjects)
	options.Positive(&o.DiscoveryInterval, DefaultDiscoveryInterval)
	options.Positive(&o.ServiceClients, DefaultServiceClients)
	options.Positive(&o.MaxGlobalContextEntries, DefaultMaxGlobalContextEntries)
	options.Positive(&o.GlobalContextMinRefresh, DefaultGlobalContextMinRefresh)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.transport == nil {
		o.transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return o
}

// Lookup is the eval.Lookup of the decision server in a cluster. It is
// safe for concurrent use.
type Lookup struct {
	opts Options

	configMaps *ttlCache[map[string]any]
	namespaces *ttlCache[map[string]any]
	informer   informers.SharedInformerFactory
	watched    sync.Map // namespace/name → watched
	startOnce  sync.Once

	mapper   *kindMapper
	services *serviceClients
	// gctx holds the GlobalContextEntries (nil when disabled).
	gctx *globalContext
}

var _ eval.Lookup = (*Lookup)(nil)

// New returns a Lookup over the clients of opts. Call Start to fill the
// ConfigMap informer cache; without it every ConfigMap is read with a GET.
func New(opts Options) (*Lookup, error) {
	switch {
	case opts.Kube == nil:
		return nil, errors.New("cluster lookup: no Kubernetes client")
	case opts.Dynamic == nil:
		return nil, errors.New("cluster lookup: no dynamic client")
	case opts.REST == nil:
		return nil, errors.New("cluster lookup: no REST client")
	}
	opts = opts.withDefaults()
	l := &Lookup{
		opts:       opts,
		configMaps: newTTLCache[map[string]any](opts.CacheSize, opts.CacheTTL, opts.now),
		namespaces: newTTLCache[map[string]any](opts.CacheSize, opts.CacheTTL, opts.now),
		informer:   newConfigMapInformer(opts.Kube),
		mapper:     newKindMapper(opts.Kube.Discovery(), opts.DiscoveryInterval, opts.now, opts.Logger),
		services:   newServiceClients(opts.ServiceClients, opts.APICallTimeout, opts.transport),
	}
	// Register the lister before Start, so the factory starts it.
	l.informer.Core().V1().ConfigMaps().Informer()
	if !opts.DisableGlobalContext {
		l.gctx = newGlobalContext(l)
	}
	return l, nil
}

// NewForConfig returns a Lookup reaching the cluster of cfg; opts' Kube,
// Dynamic and REST are replaced by clients of cfg.
func NewForConfig(cfg *rest.Config, opts Options) (*Lookup, error) {
	var err error
	if opts.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if opts.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	rc := rest.CopyConfig(cfg)
	rc.APIPath = "/api"
	rc.ContentType = "application/json"
	rc.AcceptContentTypes = "application/json"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if opts.REST, err = rest.UnversionedRESTClientFor(rc); err != nil {
		return nil, fmt.Errorf("REST client: %w", err)
	}
	return New(opts)
}

// Start runs the informer of the ConfigMaps labelled CacheLabel until ctx
// ends, and returns at once; until it has synced, those ConfigMaps are
// read with GETs. It also watches the GlobalContextEntries (unless
// DisableGlobalContext) and keeps their data (globalcontext.go). Calls
// after the first do nothing.
func (l *Lookup) Start(ctx context.Context) {
	l.startOnce.Do(func() {
		if l.gctx != nil {
			go l.gctx.run(ctx)
		}
		inf := l.informer.Core().V1().ConfigMaps().Informer()
		_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
			l.opts.Logger.WarnContext(ctx, "ConfigMap cache watch failed; retrying (ConfigMaps are read with GETs meanwhile)", "label", CacheLabel, "error", err)
		})
		l.informer.Start(ctx.Done())
	})
}

// GlobalContext implements eval.Lookup (the globalReference context
// entry): the data of the GlobalContextEntry name, or of one of its
// projections ("entry.projection"), as Kyverno's loader reads them.
func (l *Lookup) GlobalContext(_ context.Context, name string) (any, error) {
	if l.gctx == nil {
		return nil, fmt.Errorf("global context entry %s: the decision server does not read GlobalContextEntries (--disable-global-context): %w", name, engine.ErrNotFound)
	}
	return l.gctx.lookup(name)
}

// ImageData implements eval.Lookup: imageRegistry context entries are not
// loaded.
func (l *Lookup) ImageData(_ context.Context, reference string) (any, error) {
	return nil, fmt.Errorf("image %s: the decision server does not load imageRegistry context entries: %w", reference, engine.ErrNotFound)
}
