package webhookproxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// ErrNamespacesNotSynced is the error of a NamespaceLabels call that found
// the namespace cache not yet synced with the API server after waiting
// NamespaceCacheOptions.SyncWait. The review then fails as a decision
// failure does (denied or allowed by the failure policy of the path),
// with a message saying so, and is counted in
// verdict_webhook_namespace_cache_unsynced_total.
var ErrNamespacesNotSynced = errors.New("namespace cache not synced with the API server")

// Defaults of NamespaceCacheOptions.
const (
	// DefaultNamespaceSyncWait is how long a review waits for the first
	// sync of the namespace cache.
	DefaultNamespaceSyncWait = 2 * time.Second
	// DefaultNamespaceResync is the informer's resync period (0: none;
	// the watch keeps the cache current).
	DefaultNamespaceResync = 0
)

// NamespaceCacheOptions configure a NamespaceCache. The zero value is
// usable.
type NamespaceCacheOptions struct {
	// SyncWait bounds the wait of a review for the cache's first sync.
	// Default DefaultNamespaceSyncWait (2 s); the review's own deadline
	// ends the wait earlier.
	SyncWait time.Duration
	// Resync is the informer's resync period. Default none.
	Resync time.Duration
}

// NamespaceCache is the informer-backed NamespaceLabels: it lists and
// watches the cluster's Namespaces and answers from memory. A namespace
// the cache does not hold yet (created a moment ago) is read from the API
// server; one that does not exist has no labels, as Kyverno evaluates a
// request whose namespace it cannot get.
type NamespaceCache struct {
	client kubernetes.Interface
	opts   NamespaceCacheOptions

	factory informers.SharedInformerFactory
	lister  corelisters.NamespaceLister
	synced  chan struct{}
}

// NewNamespaceCache returns a cache of the Namespaces of client. It serves
// nothing until Start.
func NewNamespaceCache(client kubernetes.Interface, opts NamespaceCacheOptions) (*NamespaceCache, error) {
	if client == nil {
		return nil, errors.New("webhookproxy: NamespaceCache needs a Kubernetes client")
	}
	if opts.SyncWait <= 0 {
		opts.SyncWait = DefaultNamespaceSyncWait
	}
	if opts.Resync < 0 {
		opts.Resync = DefaultNamespaceResync
	}
	f := informers.NewSharedInformerFactory(client, opts.Resync)
	inf := f.Core().V1().Namespaces()
	inf.Informer() // register before Start
	return &NamespaceCache{client: client, opts: opts, factory: f, lister: inf.Lister(), synced: make(chan struct{})}, nil
}

// Start runs the informer until ctx ends; Synced is closed once its first
// list is in.
func (c *NamespaceCache) Start(ctx context.Context) {
	c.factory.Start(ctx.Done())
	go func() {
		for _, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return
			}
		}
		close(c.synced)
	}()
}

// Synced is closed once the cache holds the cluster's namespaces.
func (c *NamespaceCache) Synced() <-chan struct{} { return c.synced }

// NamespaceLabels implements NamespaceLabels. Before the first sync it
// waits up to SyncWait (or ctx's end), then fails with
// ErrNamespacesNotSynced.
func (c *NamespaceCache) NamespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	select {
	case <-c.synced:
	default:
		t := time.NewTimer(c.opts.SyncWait)
		defer t.Stop()
		select {
		case <-c.synced:
		case <-t.C:
			return nil, fmt.Errorf("%w after waiting %s", ErrNamespacesNotSynced, c.opts.SyncWait)
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrNamespacesNotSynced, ctx.Err())
		}
	}
	ns, err := c.lister.Get(name)
	if err == nil {
		return ns.Labels, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	live, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get namespace: %w", err)
	}
	return live.Labels, nil
}
