package webhookproxy_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

func TestApplierAttempts(t *testing.T) {
	a, mapper, reg := applierWith(t, webhookproxy.ApplierOptions{Attempts: 3, Backoff: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	a.Generate("u1", []*verdictv1.GenerateIntent{{Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{"apiVersion":"x.io/v1","kind":"Widget","metadata":{"name":"w"}}`)}})
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
}

func TestApplierQueueSize(t *testing.T) {
	a, _, reg := applierWith(t, webhookproxy.ApplierOptions{QueueSize: 1})
	in := &verdictv1.GenerateIntent{Action: verdictv1.GenerateAction_GENERATE_ACTION_CREATE, Resource: []byte(`{}`)}
	a.Generate("u1", []*verdictv1.GenerateIntent{in, in, in}) // not running: one fits
	if n := counterOfReg(t, reg, "verdict_webhook_generate_total", "outcome", "dropped"); n != 2 {
		t.Errorf("verdict_webhook_generate_total{outcome=dropped} = %v, want 2", n)
	}
}

func counterOfReg(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	return counterOf(tb, reg, name, label, value)
}
