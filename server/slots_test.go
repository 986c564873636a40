package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine/eval"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// configMapPolicy reads a ConfigMap in a deny condition: evaluating it
// calls Lookup.ConfigMap.
var configMapPolicy = bt(`apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: read-config
spec:
  rules:
  - name: config
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: cfg
      configMap: {name: settings, namespace: default}
    validate:
      failureAction: Audit
      deny:
        conditions:
          any:
          - {key: "{{ cfg.data.mode }}", operator: Equals, value: locked}
`)

// blockingLookup blocks ConfigMap until release is closed, after a send
// on entered.
type blockingLookup struct {
	entered chan<- struct{}
	release <-chan struct{}
}

func (l blockingLookup) ConfigMap(ctx context.Context, _, _ string) (map[string]any, error) {
	l.entered <- struct{}{}
	select {
	case <-l.release:
		return map[string]any{"data": map[string]any{"mode": "open"}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errNoData = errors.New("no data")

func (blockingLookup) APICall(context.Context, eval.APICall) (any, error) { return nil, errNoData }
func (blockingLookup) GlobalContext(context.Context, string) (any, error) { return nil, errNoData }
func (blockingLookup) ImageData(context.Context, string) (any, error)     { return nil, errNoData }
func (blockingLookup) Namespace(context.Context, string) (map[string]any, error) {
	return nil, errNoData
}
func (blockingLookup) Params(context.Context, eval.ParamQuery) ([]map[string]any, error) {
	return nil, errNoData
}
func (blockingLookup) Resource(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, errNoData
}
func (blockingLookup) Resources(context.Context, string, string, string, labels.Selector) ([]map[string]any, error) {
	return nil, errNoData
}

// TestMaxEvaluations checks the evaluation slots with one slot: a call
// that holds it makes the next one wait in line (and fail when its
// deadline passes there), a call waiting for a lookup does not hold it,
// and a negative limit means none.
func TestMaxEvaluations(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	lookupEntered, lookupRelease := make(chan struct{}, 1), make(chan struct{})
	reg := prometheus.NewRegistry()
	ts := startServer(t, Options{
		MaxEvaluations: 1,
		Registry:       reg,
		Lookup:         blockingLookup{entered: lookupEntered, release: lookupRelease},
		slotHook:       hook(entered, release),
	})
	c := ts.client(t)
	waiting, err := testutil.GatherAndCount(reg, "verdict_evaluations_waiting")
	if err != nil || waiting != 1 {
		t.Fatalf("verdict_evaluations_waiting: %d series, %v; want 1", waiting, err)
	}

	// A call in a lookup gives its slot up: another call runs meanwhile.
	lookupDone := make(chan error, 1)
	go func() {
		req := requestIn(t, "default")
		req.Policies = &verdictv1.EvaluateRequest_InlinePolicies{InlinePolicies: &verdictv1.InlinePolicies{Documents: [][]byte{[]byte(configMapPolicy)}}}
		_, err := c.Evaluate(t.Context(), req)
		lookupDone <- err
	}()
	<-lookupEntered
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := c.Evaluate(ctx, requestIn(t, "fast")); err != nil {
		t.Errorf("Evaluate while another call waits for a lookup: %v, want it to run", err)
	}
	close(lookupRelease)
	if err := <-lookupDone; err != nil {
		t.Errorf("Evaluate with a lookup: %v", err)
	}

	// A call that holds the slot: the next one waits, then runs out of
	// time in line.
	first := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(t.Context(), requestIn(t, "block"))
		first <- err
	}()
	<-entered
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	queued := make(chan error, 1)
	go func() {
		_, err := c.Evaluate(ctx, requestIn(t, "fast"))
		queued <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(ts.srv.slots.waiting) != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := testutil.ToFloat64(ts.srv.slots.waiting); got != 1 {
		t.Errorf("verdict_evaluations_waiting with the slot taken = %v, want 1", got)
	}
	if code, _ := statusOf(<-queued); code != codes.DeadlineExceeded {
		t.Errorf("call waiting for the only slot past its deadline: code %v, want DeadlineExceeded", code)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first call: %v", err)
	}
	if _, err := c.Evaluate(t.Context(), requestIn(t, "fast")); err != nil {
		t.Errorf("call after the slot was given back: %v", err)
	}
	if got := testutil.ToFloat64(ts.srv.slots.waiting); got != 0 {
		t.Errorf("verdict_evaluations_waiting at rest = %v, want 0", got)
	}

	unlimited := startServer(t, Options{MaxEvaluations: -1})
	if unlimited.srv.slots != nil {
		t.Errorf("New(MaxEvaluations -1) limits evaluations, want no limit")
	}
}
