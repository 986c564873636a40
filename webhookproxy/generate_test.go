package webhookproxy_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// countingMapper knows ConfigMaps only and counts its resets.
type countingMapper struct {
	meta.RESTMapper
	resets atomic.Int64
}

func (m *countingMapper) Reset() { m.resets.Add(1) }

func newMapper() *countingMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return &countingMapper{RESTMapper: m}
}

func applierWith(t *testing.T, opts webhookproxy.ApplierOptions) (*webhookproxy.Applier, *countingMapper, *prometheus.Registry) {
	t.Helper()
	mapper := newMapper()
	opts.Registry = prometheus.NewRegistry()
	a, err := webhookproxy.NewApplier(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), mapper, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, mapper, opts.Registry
}

func TestApplierBadIntents(t *testing.T) {
	a, _, _ := applierWith(t, webhookproxy.ApplierOptions{})
	tests := []struct {
		name    string
		give    *verdictv1.GenerateIntent
		wantErr string
	}{
		{name: "not JSON", give: &verdictv1.GenerateIntent{Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`[`)}, wantErr: "not a JSON object"},
		{name: "no name", give: &verdictv1.GenerateIntent{Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)}, wantErr: "metadata.name are required"},
		{name: "unknown kind", give: &verdictv1.GenerateIntent{Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{"apiVersion":"x.io/v1","kind":"Widget","metadata":{"name":"w"}}`)}, wantErr: "map x.io/v1, Kind=Widget"},
		{name: "unknown action", give: &verdictv1.GenerateIntent{Resource: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}, wantErr: "unknown action"},
	}
	for _, tt := range tests {
		_, err := a.Apply(context.Background(), tt.give)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Apply(%s) = %v, want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
}

// failures records what ApplierOptions.Failed is told.
type failures struct {
	mu  sync.Mutex
	got []string
}

func (f *failures) failed(t webhookproxy.Trigger, in *verdictv1.GenerateIntent, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fmt.Sprintf("%s %s/%s %s %s/%s: %v", t.UID, t.Kind, t.Name, t.PolicyKind(in), in.GetPolicy(), in.GetRule(), err))
}

func (f *failures) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

func TestApplierAttempts(t *testing.T) {
	fails := &failures{}
	a, mapper, reg := applierWith(t, webhookproxy.ApplierOptions{Attempts: 3, Backoff: time.Millisecond, Failed: fails.failed})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	trig := webhookproxy.Trigger{UID: "u1", APIVersion: "v1", Kind: "Namespace", Name: "team-a", PolicyKinds: map[string]string{"gen": "GeneratingPolicy"}}
	a.Generate(trig, []*verdictv1.GenerateIntent{{Policy: "add-widget", Rule: "w", Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{"apiVersion":"x.io/v1","kind":"Widget","metadata":{"name":"w"}}`)}})
	deadline := time.Now().Add(10 * time.Second)
	for counterOfReg(t, reg, "verdict_webhook_generate_total", "outcome", "failed") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the intent was not counted as failed after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := mapper.resets.Load(); n != 3 {
		t.Errorf("mapper resets (one per attempt of an unknown kind) = %d, want 3", n)
	}
	got := fails.list()
	if len(got) != 1 || !strings.HasPrefix(got[0], "u1 Namespace/team-a ClusterPolicy add-widget/w: map x.io/v1, Kind=Widget") {
		t.Errorf("Failed calls = %q, want one for u1, Namespace/team-a, ClusterPolicy add-widget/w, naming the kind", got)
	}
}

func TestApplierQueueSize(t *testing.T) {
	fails := &failures{}
	a, _, reg := applierWith(t, webhookproxy.ApplierOptions{QueueSize: 1, Failed: fails.failed})
	in := &verdictv1.GenerateIntent{Policy: "gen", PolicyNamespace: "team-a", Rule: "r", Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{}`)}
	a.Generate(webhookproxy.Trigger{UID: "u1", Kind: "Pod", Name: "p"}, []*verdictv1.GenerateIntent{in, in, in}) // not running: one fits
	if n := counterOfReg(t, reg, "verdict_webhook_generate_total", "outcome", "dropped"); n != 2 {
		t.Errorf("verdict_webhook_generate_total{outcome=dropped} = %v, want 2", n)
	}
	want := []string{"u1 Pod/p Policy gen/r: generate queue full (1 intents)", "u1 Pod/p Policy gen/r: generate queue full (1 intents)"}
	if diff := cmp.Diff(want, fails.list()); diff != "" {
		t.Errorf("Failed calls mismatch (-want +got):\n%s", diff)
	}
}

func counterOfReg(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	return counterOf(tb, reg, name, label, value)
}

func TestTriggerPolicyKind(t *testing.T) {
	trig := webhookproxy.Trigger{PolicyKinds: map[string]string{"gen": "GeneratingPolicy", "team-a/local": "NamespacedGeneratingPolicy"}}
	tests := []struct {
		give *verdictv1.GenerateIntent
		want string
	}{
		{&verdictv1.GenerateIntent{Policy: "gen"}, "GeneratingPolicy"},
		{&verdictv1.GenerateIntent{Policy: "local", PolicyNamespace: "team-a"}, "NamespacedGeneratingPolicy"},
		{&verdictv1.GenerateIntent{Policy: "add-quota"}, "ClusterPolicy"},
		{&verdictv1.GenerateIntent{Policy: "add-quota", PolicyNamespace: "team-a"}, "Policy"},
	}
	for _, tt := range tests {
		if got := trig.PolicyKind(tt.give); got != tt.want {
			t.Errorf("PolicyKind(%s/%s) = %q, want %q", tt.give.GetPolicyNamespace(), tt.give.GetPolicy(), got, tt.want)
		}
	}
}
