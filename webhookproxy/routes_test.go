package webhookproxy_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// ownerIgnorePolicy blocks Namespaces without an owner label; its
// failurePolicy is Ignore.
const ownerIgnorePolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-ns-owner
spec:
  failurePolicy: Ignore
  rules:
    - name: owner
      match:
        any:
          - resources:
              kinds: [Namespace]
      validate:
        failureAction: Enforce
        message: "label owner is required"
        pattern:
          metadata:
            labels:
              owner: "?*"
`

// generateQuotaPolicy generates a ConfigMap in every new Namespace.
const generateQuotaPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-ns-defaults
spec:
  rules:
    - name: defaults-configmap
      match:
        any:
          - resources:
              kinds: [Namespace]
      generate:
        apiVersion: v1
        kind: ConfigMap
        name: ns-defaults
        namespace: "{{request.object.metadata.name}}"
        synchronize: true
        data:
          data:
            owner: platform
`

// deniedPolicies names the policies quoted in a deny message.
func deniedPolicies(resp map[string]any) []string {
	st, _ := resp["status"].(map[string]any)
	msg, _ := st["message"].(string)
	var out []string
	for _, name := range []string{"require-ns-purpose-label", "require-ns-owner"} {
		if strings.Contains(msg, name+":") {
			out = append(out, name)
		}
	}
	return out
}

func TestProxyFailurePolicyPaths(t *testing.T) {
	c := startDecisionServer(t, nsPolicy, ownerIgnorePolicy)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	unlabelled := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`
	tests := []struct {
		path string
		want []string // policies that deny
	}{
		{path: "/validate", want: []string{"require-ns-purpose-label", "require-ns-owner"}},
		{path: "/validate/fail", want: []string{"require-ns-purpose-label"}},
		{path: "/validate/ignore", want: []string{"require-ns-owner"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body, raw := p.post(t, tt.path, review("u1", "CREATE", "Namespace", "", unlabelled))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			if diff := cmp.Diff(tt.want, deniedPolicies(responseOf(body))); diff != "" {
				t.Errorf("POST %s denying policies (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestProxyFailurePolicyPathsServerDown(t *testing.T) {
	tests := []struct {
		path         string
		giveFailOpen bool
		wantAllowed  bool
		wantMode     string
	}{
		{path: "/validate", wantAllowed: false, wantMode: "closed"},
		{path: "/validate", giveFailOpen: true, wantAllowed: true, wantMode: "open"},
		{path: "/validate/fail", giveFailOpen: true, wantAllowed: false, wantMode: "closed"},
		{path: "/validate/ignore", wantAllowed: true, wantMode: "open"},
		{path: "/mutate/fail", giveFailOpen: true, wantAllowed: false, wantMode: "closed"},
		{path: "/mutate/ignore", wantAllowed: true, wantMode: "open"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s fail-open %v", tt.path, tt.giveFailOpen), func(t *testing.T) {
			p := startProxy(t, downDecider(t), webhookproxy.Options{FailOpen: tt.giveFailOpen, Timeout: 2 * time.Second}, nil, nil)
			code, body, raw := p.post(t, tt.path, review("u1", "CREATE", "Namespace", "", nsProduction))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			got := responseOf(body)
			if got["allowed"] != tt.wantAllowed {
				t.Errorf("POST %s allowed = %v, want %v (response %v)", tt.path, got["allowed"], tt.wantAllowed, got)
			}
			if n := counterOf(t, p.registry, "verdict_webhook_decider_failures_total", "endpoint", tt.path[1:]); n != 1 {
				t.Errorf("verdict_webhook_decider_failures_total{endpoint=%q} = %v, want 1", tt.path[1:], n)
			}
			if n := counterOf(t, p.registry, "verdict_webhook_decider_failures_total", "mode", tt.wantMode); n != 1 {
				t.Errorf("verdict_webhook_decider_failures_total{mode=%q} = %v, want 1", tt.wantMode, n)
			}
		})
	}
}

func TestProxyNamespaceCacheNotSynced(t *testing.T) {
	c := startDecisionServer(t, labelPolicy)
	// Never started: never synced.
	nc, err := webhookproxy.NewNamespaceCache(fake.NewClientset(), webhookproxy.NamespaceCacheOptions{SyncWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, c, webhookproxy.Options{Namespaces: nc}, nil, nil)
	tests := []struct {
		path        string
		wantAllowed bool
	}{
		{path: "/mutate/fail", wantAllowed: false},
		{path: "/mutate/ignore", wantAllowed: true},
	}
	for i, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body, raw := p.post(t, tt.path, review("u1", "CREATE", "ConfigMap", "shop", configMap))
			if code != http.StatusOK {
				t.Fatalf("POST %s = %d %s, want 200", tt.path, code, raw)
			}
			got := responseOf(body)
			if got["allowed"] != tt.wantAllowed {
				t.Errorf("POST %s allowed = %v, want %v", tt.path, got["allowed"], tt.wantAllowed)
			}
			msg := fmt.Sprint(got["warnings"], got["status"])
			if !strings.Contains(msg, "namespace cache not synced") {
				t.Errorf("POST %s message = %q, want it to say the namespace cache is not synced", tt.path, msg)
			}
			if n := unlabelledCounter(t, p, "verdict_webhook_namespace_cache_unsynced_total"); n != float64(i+1) {
				t.Errorf("verdict_webhook_namespace_cache_unsynced_total = %v, want %d", n, i+1)
			}
		})
	}
}

// unlabelledCounter returns the value of a counter without labels.
func unlabelledCounter(tb testing.TB, p *proxy, name string) float64 {
	tb.Helper()
	mfs, err := p.registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

func TestNamespaceCache(t *testing.T) {
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"env": "prod"}}})
	nc, err := webhookproxy.NewNamespaceCache(cs, webhookproxy.NamespaceCacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc.Start(ctx)
	select {
	case <-nc.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("namespace cache not synced after 10s")
	}
	tests := []struct {
		name string
		want map[string]string
	}{
		{name: "shop", want: map[string]string{"env": "prod"}},
		{name: "absent"},
	}
	for _, tt := range tests {
		got, err := nc.NamespaceLabels(ctx, tt.name)
		if err != nil {
			t.Errorf("NamespaceLabels(%s) error: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("NamespaceLabels(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestNamespaceCacheSyncWait(t *testing.T) {
	tests := []struct {
		give time.Duration
		want string
	}{
		{give: 0, want: "after waiting 2s"}, // the default
		{give: 30 * time.Millisecond, want: "after waiting 30ms"},
	}
	for _, tt := range tests {
		nc, err := webhookproxy.NewNamespaceCache(fake.NewClientset(), webhookproxy.NamespaceCacheOptions{SyncWait: tt.give})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = nc.NamespaceLabels(context.Background(), "shop")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NamespaceLabels on an unsynced cache (SyncWait %s) = %v, want an error %q", tt.give, err, tt.want)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("NamespaceLabels waited %s", el)
		}
	}
}

// recordingGenerator records the intents it is given.
type recordingGenerator struct {
	mu   sync.Mutex
	uids []string
}

func (g *recordingGenerator) Generate(t webhookproxy.Trigger, intents []*verdictv1.GenerateIntent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, in := range intents {
		g.uids = append(g.uids, t.UID+":"+in.GetAction().String()+":"+in.GetRule())
	}
}

func TestProxyGenerates(t *testing.T) {
	c := startDecisionServer(t, generateQuotaPolicy, ownerIgnorePolicy)
	g := &recordingGenerator{}
	p := startProxy(t, c, webhookproxy.Options{Generator: g}, nil, nil)
	owned := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"owner":"me"}}}`
	unowned := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`
	dryRun := strings.Replace(review("dry", "CREATE", "Namespace", "", owned), `"operation"`, `"dryRun":true,"operation"`, 1)
	for _, give := range []struct{ path, body string }{
		{"/validate", review("admitted", "CREATE", "Namespace", "", owned)},
		{"/validate", review("denied", "CREATE", "Namespace", "", unowned)},
		{"/validate", dryRun},
		{"/mutate", review("mutate", "CREATE", "Namespace", "", owned)},
		{"/validate/ignore", review("other-failure-policy", "CREATE", "Namespace", "", owned)},
	} {
		if code, _, raw := p.post(t, give.path, give.body); code != http.StatusOK {
			t.Fatalf("POST %s = %d %s", give.path, code, raw)
		}
	}
	want := []string{"admitted:GENERATE_ACTION_CREATE:defaults-configmap"}
	if diff := cmp.Diff(want, g.uids); diff != "" {
		t.Errorf("generated intents (-want +got):\n%s", diff)
	}
}

// recordingSink records the evaluations the server offers to the report
// path.
type recordingSink struct {
	publish.Sink
	ch chan *verdictv1.ResourceEvaluation
}

func (s *recordingSink) Offer(items ...*verdictv1.PublishItem) error {
	for _, it := range items {
		s.ch <- it.GetEvaluation()
	}
	return nil
}

func TestProxyDeletePublishesIdentity(t *testing.T) {
	sink := &recordingSink{ch: make(chan *verdictv1.ResourceEvaluation, 16)}
	c := startDecisionServerWith(t, server.Options{Reports: sink}, labelPolicy)
	d := &countingDecider{d: c}
	p := startProxy(t, d, webhookproxy.Options{}, nil, nil)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop","uid":"cm-uid","resourceVersion":"7"}}`
	if code, _, raw := p.post(t, "/mutate", review("m", "DELETE", "ConfigMap", "shop", cm)); code != http.StatusOK {
		t.Fatalf("POST /mutate DELETE = %d %s", code, raw)
	}
	if n := d.calls.Load(); n != 0 {
		t.Errorf("a DELETE at /mutate called the server %d times, want 0", n)
	}
	code, body, raw := p.post(t, "/validate", review("v", "DELETE", "ConfigMap", "shop", cm))
	if code != http.StatusOK || responseOf(body)["allowed"] != true {
		t.Fatalf("POST /validate DELETE = %d %s, want 200 allowed", code, raw)
	}
	select {
	case ev := <-sink.ch:
		want := &verdictv1.ResourceEvaluation{
			Resource:        &verdictv1.ObjectReference{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "cm", Uid: "cm-uid"},
			ResourceVersion: "7",
			Source:          verdictv1.ReportSource_REPORT_SOURCE_ADMISSION,
			Operation:       verdictv1.Operation_OPERATION_DELETE,
			Complete:        true,
		}
		got := proto.CloneOf(ev)
		got.Time = nil
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("published evaluation of a DELETE (-want +got):\n%s", diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no evaluation published for the DELETE after 10s")
	}
}

// TestProxyReportsFromValidatePathsOnly: a CREATE goes through /mutate
// (the object without its UID yet) and then /validate (as stored); only
// the validate path's evaluation is published, so the report writer sees
// the resource once, by its UID.
func TestProxyReportsFromValidatePathsOnly(t *testing.T) {
	sink := &recordingSink{ch: make(chan *verdictv1.ResourceEvaluation, 16)}
	c := startDecisionServerWith(t, server.Options{Reports: sink}, labelPolicy)
	p := startProxy(t, c, webhookproxy.Options{}, nil, nil)
	before := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop"}}`
	stored := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop","uid":"cm-uid"}}`
	for _, path := range []string{"/mutate", "/mutate/fail"} {
		if code, _, raw := p.post(t, path, review("m", "CREATE", "ConfigMap", "shop", before)); code != http.StatusOK {
			t.Fatalf("POST %s CREATE = %d %s", path, code, raw)
		}
	}
	if code, _, raw := p.post(t, "/validate", review("v", "CREATE", "ConfigMap", "shop", stored)); code != http.StatusOK {
		t.Fatalf("POST /validate CREATE = %d %s", code, raw)
	}
	// Evaluations are published in the order they finish: had a mutate
	// path's been published, it would come first.
	select {
	case ev := <-sink.ch:
		if ev.GetResource().GetUid() != "cm-uid" {
			t.Errorf("first published evaluation is of %v, want the validate path's (UID cm-uid)", ev.GetResource())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no evaluation published after 10s")
	}
}
