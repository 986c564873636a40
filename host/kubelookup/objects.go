package kubelookup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/verdict-policy/verdict/engine/eval"
)

// namespaces is the resource of Namespace objects.
var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Namespace implements eval.Lookup for CEL's namespaceObject: the
// Namespace read with a GET, kept CacheTTL (found or not).
func (l *Lookup) Namespace(ctx context.Context, name string) (map[string]any, error) {
	return l.namespaces.get(name, func() (map[string]any, error) {
		u, err := l.opts.Dynamic.Resource(namespaces).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, clusterError("namespace "+name, err)
		}
		return u.Object, nil
	}, keepError)
}

// Resource implements eval.Lookup with a GET through the dynamic client;
// namespace is ignored for a cluster-scoped kind. apiVersion "" is the
// kind's preferred version in any group.
func (l *Lookup) Resource(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	what := objectName(apiVersion, kind, namespace, name)
	m, err := l.mapper.mapping(apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u, err := l.resource(m, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, clusterError(what, err)
	}
	return u.Object, nil
}

// Resources implements eval.Lookup with a list through the dynamic client
// (the selector is sent to the API server), in pages, of at most
// MaxListObjects objects.
func (l *Lookup) Resources(ctx context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error) {
	what := objectName(apiVersion, kind, namespace, "")
	m, err := l.mapper.mapping(apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	opts := metav1.ListOptions{Limit: 500}
	if selector != nil && !selector.Empty() {
		opts.LabelSelector = selector.String()
	}
	return l.list(ctx, what, l.resource(m, namespace), opts, nil)
}

// Params implements eval.Lookup as Kyverno's CollectParams does: a
// namespaced paramKind is read in paramRef.namespace, else in the
// namespace of the resource under evaluation; a cluster-scoped one must
// not have paramRef.namespace.
func (l *Lookup) Params(ctx context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	if _, err := schema.ParseGroupVersion(q.APIVersion); err != nil || q.APIVersion == "" {
		return nil, fmt.Errorf("paramKind.apiVersion %q: can't parse the parameter resource group version", q.APIVersion)
	}
	m, err := l.mapper.mapping(q.APIVersion, q.Kind)
	if err != nil {
		return nil, fmt.Errorf("paramKind %s %s: %w", q.APIVersion, q.Kind, err)
	}
	var ns string
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = q.RequestNamespace
		if q.Namespace != "" {
			ns = q.Namespace
		} else if ns == "" {
			return nil, errors.New("can't use namespaced paramRef to match cluster-scoped resources")
		}
	} else if q.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	ri := l.resource(m, ns)
	if q.Name != "" {
		u, err := ri.Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil {
			return nil, clusterError("params "+objectName(q.APIVersion, q.Kind, ns, q.Name), err)
		}
		return []map[string]any{u.Object}, nil
	}
	if q.Selector == nil {
		return nil, nil
	}
	// The selector may hold wildcards the API server does not know: it
	// is applied here.
	keep := func(u *unstructured.Unstructured) bool { return q.Selector.Matches(u.GetLabels()) }
	return l.list(ctx, "params "+objectName(q.APIVersion, q.Kind, ns, ""), ri, metav1.ListOptions{Limit: 500}, keep)
}

// resource is the dynamic client of m's resource in namespace (ignored
// for cluster-scoped resources; "" is every namespace).
func (l *Lookup) resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	ri := l.opts.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		return ri.Namespace(namespace)
	}
	return ri
}

// list reads every page of a list, keeping the objects keep accepts (all
// when keep is nil), at most MaxListObjects.
func (l *Lookup) list(ctx context.Context, what string, ri dynamic.ResourceInterface, opts metav1.ListOptions, keep func(*unstructured.Unstructured) bool) ([]map[string]any, error) {
	var out []map[string]any
	for {
		ul, err := ri.List(ctx, opts)
		if err != nil {
			return nil, clusterError(what, err)
		}
		for i := range ul.Items {
			if keep != nil && !keep(&ul.Items[i]) {
				continue
			}
			if len(out) == l.opts.MaxListObjects {
				return nil, fmt.Errorf("%s: more than %d objects", what, l.opts.MaxListObjects)
			}
			out = append(out, ul.Items[i].Object)
		}
		if opts.Continue = ul.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// objectName names an object or a list in errors.
func objectName(apiVersion, kind, namespace, name string) string {
	s := kind
	if apiVersion != "" {
		s = apiVersion + " " + kind
	}
	switch {
	case namespace != "" && name != "":
		return s + " " + namespace + "/" + name
	case name != "":
		return s + " " + name
	case namespace != "":
		return s + " in namespace " + namespace
	}
	return s
}

// kindMapper maps kinds to resources through cached discovery. A kind it
// does not know refreshes the cache, at most once per interval.
type kindMapper struct {
	disc     discovery.CachedDiscoveryInterface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu        sync.Mutex
	refreshed time.Time
}

func newKindMapper(d discovery.DiscoveryInterface, interval time.Duration, now func() time.Time, log *slog.Logger) *kindMapper {
	disc := memory.NewMemCacheClient(d)
	return &kindMapper{disc: disc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc), interval: interval, now: now, log: log}
}

// mapping returns the mapping of kind in apiVersion ("" for the kind's
// preferred version in any group, the core group first).
func (k *kindMapper) mapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	m, err := k.find(apiVersion, kind)
	if err != nil && (meta.IsNoMatchError(err) || errors.Is(err, errNoKind)) && k.refresh() {
		m, err = k.find(apiVersion, kind)
	}
	return m, err
}

var errNoKind = errors.New("the cluster does not serve this kind")

func (k *kindMapper) find(apiVersion, kind string) (*meta.RESTMapping, error) {
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		return k.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	}
	lists, err := k.disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var found *schema.GroupVersion
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if r.Kind == kind && !isSubresource(r.Name) && (found == nil || gv.Group == "" && found.Group != "") {
				found = &gv
			}
		}
	}
	if found == nil {
		return nil, errNoKind
	}
	return k.mapper.RESTMapping(found.WithKind(kind).GroupKind(), found.Version)
}

func isSubresource(name string) bool {
	for i := range len(name) {
		if name[i] == '/' {
			return true
		}
	}
	return false
}

// refresh empties the discovery cache unless it was emptied less than
// interval ago, and tells whether it did.
func (k *kindMapper) refresh() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if !k.refreshed.IsZero() && now.Sub(k.refreshed) < k.interval {
		return false
	}
	k.refreshed = now
	k.log.Debug("refreshing API discovery after a kind it did not know")
	k.mapper.Reset()
	return true
}
