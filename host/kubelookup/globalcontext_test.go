package kubelookup

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/policy"
	"github.com/verdict-policy/verdict/engine/vpol"
)

var gceGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v2beta1", Resource: GlobalContextEntries}

// gce is a GlobalContextEntry with spec.
func gce(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("kyverno.io/v2beta1")
	u.SetKind("GlobalContextEntry")
	u.SetName(name)
	return u
}

// newGlobalContextLookup is a started Lookup over fake clients that serve
// GlobalContextEntries and hold objs.
func newGlobalContextLookup(t *testing.T, opts Options, objs ...runtime.Object) (*Lookup, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	kube := kubefake.NewClientset()
	kube.Discovery().(*discoveryfake.FakeDiscovery).Resources = append(slices.Clone(served), &metav1.APIResourceList{
		GroupVersion: "kyverno.io/v2beta1",
		APIResources: []metav1.APIResource{{Name: GlobalContextEntries, Kind: "GlobalContextEntry"}},
	})
	kinds := map[schema.GroupVersionResource]string{gceGVR: "GlobalContextEntryList"}
	for k, v := range listKinds {
		kinds[k] = v
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
	opts.Kube, opts.Dynamic, opts.REST = kube, dyn, &rest.RESTClient{}
	l, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l.Start(ctx)
	return l, dyn
}

// eventually calls check until it returns "" or 10 s pass.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sortedNames returns the sorted strings of a []any.
func sortedNames(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// TestGlobalContextKubernetesResource: a kubernetesResource entry serves
// the objects of its resource and namespace from an informer (changes
// included), and its projections; globalContext.Get of an entry that does
// not exist is null, a globalReference to it an error; a deleted entry is
// gone.
func TestGlobalContextKubernetesResource(t *testing.T) {
	cm := func(ns, name string) *unstructured.Unstructured { return obj("v1", "ConfigMap", ns, name, nil) }
	entry := gce("team-configs", map[string]any{
		"kubernetesResource": map[string]any{"group": "", "version": "v1", "resource": "configmaps", "namespace": "team"},
		"projections":        []any{map[string]any{"name": "names", "jmesPath": "[].metadata.name"}},
	})
	l, dyn := newGlobalContextLookup(t, Options{}, entry, cm("team", "a"), cm("team", "b"), cm("other", "c"))
	ctx := context.Background()
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	eventually(t, func() string {
		got, err := l.gctx.GlobalReference(ctx, "team-configs", "names")
		if err != nil || !cmp.Equal(sortedNames(got), []string{"a", "b"}) {
			return fmt.Sprintf("GlobalReference(team-configs, names) = %v, %v; want [a b]", got, err)
		}
		return ""
	})
	all, err := l.gctx.GlobalReference(ctx, "team-configs", "")
	if list, _ := all.([]any); err != nil || len(list) != 2 {
		t.Errorf("GlobalReference(team-configs, \"\") = %v, %v; want the 2 ConfigMaps of team", all, err)
	}
	if _, err := dyn.Resource(cmGVR).Namespace("team").Create(ctx, cm("team", "d"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() string {
		got, err := l.GlobalContext(ctx, "team-configs.names")
		if err != nil || !cmp.Equal(sortedNames(got), []string{"a", "b", "d"}) {
			return fmt.Sprintf("GlobalContext(team-configs.names) = %v, %v after a ConfigMap was created; want [a b d]", got, err)
		}
		return ""
	})
	if _, err := l.GlobalContext(ctx, "team-configs.missing"); err == nil || !strings.Contains(err.Error(), `projection "missing" not found`) {
		t.Errorf("GlobalContext(team-configs.missing) = %v, want projection not found", err)
	}
	if got, err := l.gctx.GlobalReference(ctx, "nope", ""); got != nil || err != nil {
		t.Errorf("GlobalReference(nope) = %v, %v; want null, no error (Kyverno's globalContext.Get)", got, err)
	}
	if _, err := l.GlobalContext(ctx, "nope"); err == nil {
		t.Errorf("GlobalContext(nope) = nil error, want an error (Kyverno's globalReference)")
	}
	if err := dyn.Resource(gceGVR).Delete(ctx, "team-configs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() string {
		if got, err := l.gctx.GlobalReference(ctx, "team-configs", ""); got != nil || err != nil {
			return fmt.Sprintf("GlobalReference(team-configs) = %v, %v after the entry was deleted; want null", got, err)
		}
		return ""
	})
}

// TestGlobalContextAPICall: an apiCall entry serves the answer of its call
// and its projections, refreshed every refreshInterval; a failing call
// (after retryLimit attempts) makes the entry an error until a refresh
// succeeds.
func TestGlobalContextAPICall(t *testing.T) {
	var answer atomic.Value
	answer.Store(`{"teams": [{"id": "a"}, {"id": "b"}]}`)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		a := answer.Load().(string)
		if a == "fail" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, a)
	}))
	t.Cleanup(srv.Close)
	entry := gce("teams", map[string]any{
		"apiCall": map[string]any{
			"service":         map[string]any{"url": srv.URL + "/v1/teams"},
			"refreshInterval": "100ms",
			"retryLimit":      int64(2),
		},
		"projections": []any{map[string]any{"name": "ids", "jmesPath": "teams[].id"}},
	})
	l, _ := newGlobalContextLookup(t, Options{GlobalContextMinRefresh: 100 * time.Millisecond}, entry)
	ctx := context.Background()
	eventually(t, func() string {
		got, err := l.gctx.GlobalReference(ctx, "teams", "ids")
		if err != nil || !cmp.Equal(got, []any{"a", "b"}) {
			return fmt.Sprintf("GlobalReference(teams, ids) = %v, %v; want [a b]", got, err)
		}
		return ""
	})
	answer.Store(`{"teams": [{"id": "c"}]}`)
	eventually(t, func() string {
		got, err := l.GlobalContext(ctx, "teams")
		want := map[string]any{"teams": []any{map[string]any{"id": "c"}}}
		if err != nil || !cmp.Equal(got, want) {
			return fmt.Sprintf("GlobalContext(teams) = %v, %v after the answer changed; want %v", got, err, want)
		}
		return ""
	})
	answer.Store("fail")
	before := calls.Load()
	eventually(t, func() string {
		if _, err := l.GlobalContext(ctx, "teams"); err == nil || !strings.Contains(err.Error(), "2 attempts") {
			return fmt.Sprintf("GlobalContext(teams) = %v while the service fails, want an error after 2 attempts", err)
		}
		return ""
	})
	if n := calls.Load() - before; n < 2 {
		t.Errorf("the failing refresh made %d calls, want at least 2 (retryLimit)", n)
	}
}

// TestGlobalContextLimits: entries past MaxGlobalContextEntries, a
// kubernetesResource entry over MaxListObjects, an apiCall answer over
// MaxResponseBytes and invalid specs are errors naming the reason; a
// refreshInterval under GlobalContextMinRefresh is raised to it.
func TestGlobalContextLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"padding": "`+strings.Repeat("x", 100)+`"}`)
	}))
	t.Cleanup(srv.Close)
	cms := []runtime.Object{obj("v1", "ConfigMap", "big", "a", nil), obj("v1", "ConfigMap", "big", "b", nil), obj("v1", "ConfigMap", "big", "c", nil),
		obj("v1", "ConfigMap", "small", "a", nil), obj("v1", "ConfigMap", "small", "b", nil)}
	resource := func(ns string) map[string]any {
		return map[string]any{"kubernetesResource": map[string]any{"version": "v1", "resource": "configmaps", "namespace": ns}}
	}
	entries := []runtime.Object{
		gce("at-the-object-limit", resource("small")),
		gce("over-the-object-limit", resource("big")),
		gce("over-the-byte-limit", map[string]any{"apiCall": map[string]any{"service": map[string]any{"url": srv.URL}}}),
		gce("both-sources", map[string]any{"kubernetesResource": map[string]any{"version": "v1", "resource": "configmaps"}, "apiCall": map[string]any{"urlPath": "/api/v1/namespaces"}}),
		gce("projection-named-as-the-entry", map[string]any{"kubernetesResource": map[string]any{"version": "v1", "resource": "configmaps"},
			"projections": []any{map[string]any{"name": "projection-named-as-the-entry", "jmesPath": "@"}}}),
		gce("bad-jmespath", map[string]any{"kubernetesResource": map[string]any{"version": "v1", "resource": "configmaps"},
			"projections": []any{map[string]any{"name": "p", "jmesPath": "[?"}}}),
		gce("bad-interval", map[string]any{"apiCall": map[string]any{"urlPath": "/api/v1/namespaces", "refreshInterval": "soon"}}),
	}
	l, _ := newGlobalContextLookup(t, Options{MaxListObjects: 2, MaxResponseBytes: 50}, append(entries, cms...)...)
	ctx := context.Background()
	tests := []struct {
		entry   string
		wantErr string // "" for data
	}{
		{"at-the-object-limit", ""},
		{"over-the-object-limit", "holds more than 2 objects, the limit"},
		{"over-the-byte-limit", "50"},
		{"both-sources", "exactly one of kubernetesResource and apiCall"},
		{"projection-named-as-the-entry", "different from the entry's"},
		{"bad-jmespath", "spec.projections[0].jmesPath"},
		{"bad-interval", `refreshInterval "soon"`},
	}
	for _, tt := range tests {
		eventually(t, func() string {
			got, err := l.GlobalContext(ctx, tt.entry)
			switch {
			case tt.wantErr == "" && (err != nil || len(got.([]any)) != 2):
				return fmt.Sprintf("GlobalContext(%s) = %v, %v; want 2 objects", tt.entry, got, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				return fmt.Sprintf("GlobalContext(%s) = %v, %v; want an error with %q", tt.entry, got, err, tt.wantErr)
			}
			return ""
		})
	}

	// Two entries where the server keeps one.
	l, _ = newGlobalContextLookup(t, Options{MaxGlobalContextEntries: 1}, gce("one", resource("small")), gce("two", resource("small")), cms[3], cms[4])
	eventually(t, func() string {
		var errs []string
		for _, name := range []string{"one", "two"} {
			if _, err := l.GlobalContext(ctx, name); err != nil && strings.Contains(err.Error(), "the limit (--max-global-context-entries)") {
				errs = append(errs, name)
			}
		}
		if len(errs) != 1 {
			return fmt.Sprintf("entries refused over MaxGlobalContextEntries 1: %v, want one of the two", errs)
		}
		return ""
	})

	e := l.gctx.newEntry(ctx, "fast", []byte(`{"apiCall": {"service": {"url": "`+srv.URL+`"}, "refreshInterval": "1ms"}}`))
	defer e.stop()
	if a, ok := e.(*apiEntry); !ok || a.interval != DefaultGlobalContextMinRefresh {
		t.Errorf("newEntry(refreshInterval 1ms) = %#v, want an apiCall entry refreshed every %s", e, DefaultGlobalContextMinRefresh)
	}
}

// TestGlobalContextInPolicies evaluates a ClusterPolicy with a
// globalReference context entry and a ValidatingPolicy with
// globalContext.Get over the same apiCall GlobalContextEntry, through the
// engine with this Lookup and its CEL sources.
func TestGlobalContextInPolicies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"allowed": ["ghcr.io"]}`)
	}))
	t.Cleanup(srv.Close)
	entry := gce("registries", map[string]any{
		"apiCall":     map[string]any{"service": map[string]any{"url": srv.URL}},
		"projections": []any{map[string]any{"name": "allowed", "jmesPath": "allowed"}},
	})
	l, _ := newGlobalContextLookup(t, Options{}, entry)
	cp := `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: cp-registries}
spec:
  validationFailureAction: Enforce
  rules:
  - name: registry
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: allowed
      globalReference: {name: registries.allowed}
    validate:
      message: registry not allowed
      deny:
        conditions:
          any:
          - key: "{{ split(request.object.spec.containers[0].image, '/')[0] }}"
            operator: AnyNotIn
            value: "{{ allowed }}"
`
	vp := `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: vp-registries}
spec:
  validationActions: [Deny]
  autogen: {podControllers: {controllers: []}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: "globalContext.Get('registries', 'allowed').exists(r, object.spec.containers[0].image.startsWith(r + '/'))"
    message: registry not allowed
`
	var pols []*policy.Policy
	docs, err := kyverno.DecodePolicies("cp", []byte(cp))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Compile(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	pols = append(pols, p)
	vdocs, err := vpol.Decode("vp", []byte(vp))
	if err != nil {
		t.Fatal(err)
	}
	if p, err = policy.CompileValidating(vdocs[0]); err != nil {
		t.Fatal(err)
	}
	pols = append(pols, p)
	eng := eval.New(eval.Options{Lookup: l, CELData: l.CELSources()})
	podWith := func(image string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "default"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}}
	}
	tests := []struct {
		image string
		want  []eval.Status
	}{
		{"ghcr.io/team/app:v1", []eval.Status{eval.StatusPass, eval.StatusPass}},
		{"docker.io/team/app:v1", []eval.Status{eval.StatusFail, eval.StatusFail}},
	}
	for _, tt := range tests {
		eventually(t, func() string {
			resp := eng.Evaluate(context.Background(), pols, &eval.Request{Object: podWith(tt.image)})
			var got []eval.Status
			var msgs []string
			for _, r := range resp.Results {
				got = append(got, r.Status)
				msgs = append(msgs, r.Message)
			}
			if !cmp.Equal(tt.want, got) {
				return fmt.Sprintf("Evaluate(Pod with %s) = %v %q, want %v", tt.image, got, msgs, tt.want)
			}
			return ""
		})
	}
}
