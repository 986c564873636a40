package kubelookup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// served is the discovery of the fake cluster.
var served = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "namespaces", Kind: "Namespace", Namespaced: false},
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
		{Name: "secrets", Kind: "Secret", Namespaced: true},
	}},
	{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "settings", Kind: "Setting", Namespaced: true},
		{Name: "clustersettings", Kind: "ClusterSetting", Namespaced: false},
	}},
}

var listKinds = map[schema.GroupVersionResource]string{
	{Version: "v1", Resource: "namespaces"}:                            "NamespaceList",
	{Version: "v1", Resource: "configmaps"}:                            "ConfigMapList",
	{Version: "v1", Resource: "secrets"}:                               "SecretList",
	{Group: "example.com", Version: "v1", Resource: "settings"}:        "SettingList",
	{Group: "example.com", Version: "v1", Resource: "clustersettings"}: "ClusterSettingList",
}

func obj(apiVersion, kind, namespace, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	if lbls != nil {
		u.SetLabels(lbls)
	}
	return u
}

// newTestLookup is a Lookup over fake clients holding cms (typed) and
// objs (dynamic), with the clock c.
func newTestLookup(t testing.TB, c *clock, cms []runtime.Object, objs ...runtime.Object) (*Lookup, *kubefake.Clientset, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	kube := kubefake.NewClientset(cms...)
	kube.Discovery().(*discoveryfake.FakeDiscovery).Resources = served
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	l, err := New(Options{Kube: kube, Dynamic: dyn, REST: &rest.RESTClient{}, now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return l, kube, dyn
}

func TestNewRequiresClients(t *testing.T) {
	kube := kubefake.NewClientset()
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no kube", Options{Dynamic: dyn, REST: &rest.RESTClient{}}, "no Kubernetes client"},
		{"no dynamic", Options{Kube: kube, REST: &rest.RESTClient{}}, "no dynamic client"},
		{"no rest", Options{Kube: kube, Dynamic: dyn}, "no REST client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%s) = %v, want an error with %q", tt.name, err, tt.want)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	got := []any{o.CacheTTL, o.CacheSize, o.APICallTimeout, o.MaxResponseBytes, o.MaxListObjects, o.DiscoveryInterval, o.ServiceClients}
	want := []any{10 * time.Second, 1024, 10 * time.Second, int64(10_000_000), 10_000, 30 * time.Second, 32}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Options{}.withDefaults() (-want +got):\n%s", diff)
	}
	set := Options{CacheTTL: time.Second, CacheSize: 3, APICallTimeout: time.Minute, MaxResponseBytes: 5, MaxListObjects: 7, DiscoveryInterval: time.Hour, ServiceClients: 2}.withDefaults()
	got = []any{set.CacheTTL, set.CacheSize, set.APICallTimeout, set.MaxResponseBytes, set.MaxListObjects, set.DiscoveryInterval, set.ServiceClients}
	want = []any{time.Second, 3, time.Minute, int64(5), 7, time.Hour, 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withDefaults() of set options (-want +got):\n%s", diff)
	}
}

func configMap(ns, name string, data map[string]string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}, Data: data}
}

func TestConfigMap(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l, kube, _ := newTestLookup(t, c, []runtime.Object{configMap("team", "settings", map[string]string{"env": "prod"}, nil)})
	ctx := context.Background()

	got, err := l.ConfigMap(ctx, "team", "settings")
	if err != nil {
		t.Fatalf("ConfigMap(team, settings) = %v", err)
	}
	want := map[string]any{"data": map[string]any{"env": "prod"}, "metadata": map[string]any{"name": "settings", "namespace": "team"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConfigMap(team, settings) (-want +got):\n%s", diff)
	}

	_, err = l.ConfigMap(ctx, "team", "missing")
	if !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "configMap team/missing") {
		t.Errorf("ConfigMap(team, missing) = %v, want an error naming it and wrapping ErrNotFound", err)
	}

	// Within CacheTTL the ConfigMap read is reused, found or not.
	if err := kube.CoreV1().ConfigMaps("team").Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps("team").Create(ctx, configMap("team", "missing", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.add(DefaultCacheTTL - time.Second)
	if _, err := l.ConfigMap(ctx, "team", "settings"); err != nil {
		t.Errorf("ConfigMap(team, settings) within the TTL after its deletion = %v, want the cached ConfigMap", err)
	}
	if _, err := l.ConfigMap(ctx, "team", "missing"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ConfigMap(team, missing) within the TTL after its creation = %v, want the cached not found", err)
	}
	c.add(2 * time.Second)
	if _, err := l.ConfigMap(ctx, "team", "settings"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ConfigMap(team, settings) after the TTL = %v, want not found", err)
	}
	if _, err := l.ConfigMap(ctx, "team", "missing"); err != nil {
		t.Errorf("ConfigMap(team, missing) after the TTL = %v, want it found", err)
	}
}

func TestConfigMapCacheSize(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	kube := kubefake.NewClientset(configMap("a", "one", map[string]string{"k": "1"}, nil), configMap("a", "two", map[string]string{"k": "2"}, nil))
	l, err := New(Options{Kube: kube, Dynamic: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), REST: &rest.RESTClient{}, CacheSize: 1, now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"one", "two"} {
		if _, err := l.ConfigMap(ctx, "a", name); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.configMaps.lru.Keys(); !cmp.Equal(got, []string{"a/two"}) {
		t.Errorf("ConfigMap cache keys with CacheSize 1 = %v, want [a/two]", got)
	}
}

// TestConfigMapInformer: a ConfigMap labelled cache.kyverno.io/enabled is
// read from the informer, so a change shows at once, without waiting for
// the TTL.
func TestConfigMapInformer(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	cached := map[string]string{CacheLabel: "true"}
	l, kube, _ := newTestLookup(t, c, []runtime.Object{configMap("kyverno", "registries", map[string]string{"allowed": "a"}, cached)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.Start(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for !l.informer.Core().V1().ConfigMaps().Informer().HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("the ConfigMap informer did not sync within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := kube.CoreV1().ConfigMaps("kyverno").Update(ctx, configMap("kyverno", "registries", map[string]string{"allowed": "b"}, cached), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := l.ConfigMap(ctx, "kyverno", "registries")
		if err != nil {
			t.Fatalf("ConfigMap(kyverno, registries) = %v", err)
		}
		if got["data"].(map[string]any)["allowed"] == "b" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ConfigMap(kyverno, registries) = %v after an update, want allowed: b", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := l.configMaps.lru.Len(); n != 0 {
		t.Errorf("ConfigMap GET cache holds %d entries, want 0 (the labelled ConfigMap comes from the informer)", n)
	}
}

func TestNamespace(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l, _, _ := newTestLookup(t, c, nil, obj("v1", "Namespace", "", "team", map[string]string{"env": "prod"}))
	ctx := context.Background()
	got, err := l.Namespace(ctx, "team")
	if err != nil {
		t.Fatalf("Namespace(team) = %v", err)
	}
	if diff := cmp.Diff(map[string]any{"env": "prod"}, got["metadata"].(map[string]any)["labels"]); diff != "" {
		t.Errorf("Namespace(team) labels (-want +got):\n%s", diff)
	}
	if _, err := l.Namespace(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Namespace(nope) = %v, want ErrNotFound", err)
	}
}

func names(objs []map[string]any) []string {
	var out []string
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		out = append(out, u.GetNamespace()+"/"+u.GetName())
	}
	return out
}

func TestResource(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l, _, _ := newTestLookup(t, c, nil,
		obj("v1", "Secret", "team", "tls", nil),
		obj("example.com/v1", "ClusterSetting", "", "global", nil),
	)
	ctx := context.Background()
	tests := []struct {
		apiVersion, kind, ns, name string
		want                       string // namespace/name, or the error
		notFound                   bool
	}{
		{"v1", "Secret", "team", "tls", "team/tls", false},
		{"", "Secret", "team", "tls", "team/tls", false},
		{"example.com/v1", "ClusterSetting", "team", "global", "/global", false}, // namespace ignored
		{"", "ClusterSetting", "", "global", "/global", false},
		{"v1", "Secret", "team", "other", "v1 Secret team/other", true},
		{"v1", "Secret", "other", "tls", "v1 Secret other/tls", true},
		{"v1", "Widget", "team", "w", "v1 Widget team/w: no matches for kind", false},
		{"", "Widget", "team", "w", "Widget team/w: the cluster does not serve this kind", false},
	}
	for _, tt := range tests {
		got, err := l.Resource(ctx, tt.apiVersion, tt.kind, tt.ns, tt.name)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), tt.want) || errors.Is(err, engine.ErrNotFound) != tt.notFound {
				t.Errorf("Resource(%q, %s, %s, %s) = %v, want an error with %q (not found: %v)", tt.apiVersion, tt.kind, tt.ns, tt.name, err, tt.want, tt.notFound)
			}
		case names([]map[string]any{got})[0] != tt.want:
			t.Errorf("Resource(%q, %s, %s, %s) = %v, want %s", tt.apiVersion, tt.kind, tt.ns, tt.name, names([]map[string]any{got}), tt.want)
		}
	}
}

func TestResources(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l, _, _ := newTestLookup(t, c, nil,
		obj("v1", "Secret", "a", "s1", map[string]string{"copy": "yes"}),
		obj("v1", "Secret", "a", "s2", nil),
		obj("v1", "Secret", "b", "s3", map[string]string{"copy": "yes"}),
	)
	ctx := context.Background()
	yes := labels.SelectorFromSet(labels.Set{"copy": "yes"})
	tests := []struct {
		name       string
		apiVersion string
		ns         string
		sel        labels.Selector
		want       []string
	}{
		{"all namespaces", "v1", "", nil, []string{"a/s1", "a/s2", "b/s3"}},
		{"one namespace", "v1", "a", labels.Everything(), []string{"a/s1", "a/s2"}},
		{"selector", "v1", "", yes, []string{"a/s1", "b/s3"}},
		{"any version", "", "b", yes, []string{"b/s3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Resources(ctx, tt.apiVersion, "Secret", tt.ns, tt.sel)
			if err != nil {
				t.Fatalf("Resources() = %v", err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("Resources(%q, Secret, %q, %v) (-want +got):\n%s", tt.apiVersion, tt.ns, tt.sel, diff)
			}
		})
	}
}

func TestResourcesLimit(t *testing.T) {
	kube := kubefake.NewClientset()
	kube.Discovery().(*discoveryfake.FakeDiscovery).Resources = served
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		obj("v1", "Secret", "a", "s1", nil), obj("v1", "Secret", "a", "s2", nil), obj("v1", "Secret", "a", "s3", nil))
	for _, tt := range []struct {
		max     int
		wantErr bool
	}{{3, false}, {2, true}} {
		l, err := New(Options{Kube: kube, Dynamic: dyn, REST: &rest.RESTClient{}, MaxListObjects: tt.max})
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.Resources(context.Background(), "v1", "Secret", "a", nil)
		if (err != nil) != tt.wantErr || err != nil && !strings.Contains(err.Error(), "more than 2 objects") {
			t.Errorf("Resources() with MaxListObjects %d = %d objects, %v; want error %v", tt.max, len(got), err, tt.wantErr)
		}
	}
}

func TestDiscoveryRefreshOnMiss(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	kube := kubefake.NewClientset()
	fd := kube.Discovery().(*discoveryfake.FakeDiscovery)
	fd.Resources = served[:1]
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, obj("example.com/v1", "ClusterSetting", "", "global", nil))
	l, err := New(Options{Kube: kube, Dynamic: dyn, REST: &rest.RESTClient{}, DiscoveryInterval: time.Minute, now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func() error {
		_, err := l.Resource(ctx, "example.com/v1", "ClusterSetting", "", "global")
		return err
	}
	if err := get(); err == nil {
		t.Fatal("Resource(ClusterSetting) before the CRD is served = nil, want an error")
	}
	fd.Resources = served // the CRD is installed
	c.add(30 * time.Second)
	if err := get(); err == nil {
		t.Error("Resource(ClusterSetting) within DiscoveryInterval of the last refresh = nil, want the cached miss")
	}
	c.add(31 * time.Second)
	if err := get(); err != nil {
		t.Errorf("Resource(ClusterSetting) after DiscoveryInterval = %v, want it found after a refresh", err)
	}
}

func TestParams(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l, _, _ := newTestLookup(t, c, nil,
		obj("example.com/v1", "Setting", "a", "limits", map[string]string{"team": "x"}),
		obj("example.com/v1", "Setting", "a", "other", map[string]string{"team": "y"}),
		obj("example.com/v1", "Setting", "b", "limits", map[string]string{"team": "x"}),
		obj("example.com/v1", "ClusterSetting", "", "global", map[string]string{"team": "x"}),
	)
	sel, err := match.CompileSelector(&kyverno.LabelSelector{MatchLabels: map[string]string{"team": "x"}}, "paramRef.selector")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		q       eval.ParamQuery
		want    []string
		wantErr string
	}{
		{"name in request namespace", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "Setting", Name: "limits", RequestNamespace: "b"}, []string{"b/limits"}, ""},
		{"name in paramRef namespace", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "Setting", Name: "limits", Namespace: "a", RequestNamespace: "b"}, []string{"a/limits"}, ""},
		{"selector", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "Setting", Selector: sel, RequestNamespace: "a"}, []string{"a/limits"}, ""},
		{"cluster-scoped", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "ClusterSetting", Name: "global", RequestNamespace: "a"}, []string{"/global"}, ""},
		{"cluster-scoped with namespace", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "ClusterSetting", Name: "global", Namespace: "a"}, nil, "paramRef.namespace must not be provided"},
		{"namespaced without namespace", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "Setting", Name: "limits"}, nil, "can't use namespaced paramRef"},
		{"missing", eval.ParamQuery{APIVersion: "example.com/v1", Kind: "Setting", Name: "none", RequestNamespace: "a"}, nil, "not found"},
		{"bad apiVersion", eval.ParamQuery{APIVersion: "a/b/c", Kind: "Setting", Name: "x"}, nil, "can't parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Params(ctx, tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Params(%+v) = %v, %v; want an error with %q", tt.q, names(got), err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Params(%+v) = %v", tt.q, err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("Params(%+v) (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

func TestNotProvided(t *testing.T) {
	l, _, _ := newTestLookup(t, &clock{}, nil)
	if _, err := l.GlobalContext(context.Background(), "g"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "failed to fetch entry key=g") {
		t.Errorf("GlobalContext(g) = %v, want an ErrNotFound that says why", err)
	}
	l.gctx = nil // DisableGlobalContext
	if _, err := l.GlobalContext(context.Background(), "g"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "does not read GlobalContextEntries") {
		t.Errorf("GlobalContext(g) with DisableGlobalContext = %v, want an ErrNotFound that says why", err)
	}
	if _, err := l.ImageData(context.Background(), "nginx"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "imageRegistry") {
		t.Errorf("ImageData(nginx) = %v, want an ErrNotFound that says why", err)
	}
}
