package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/verdict-policy/verdict/engine/eval"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// slots limits the evaluations that use the CPU at once
// (Options.MaxEvaluations), with the compilations that requests cause:
// inline policies compile within their evaluation's slot, and a
// ValidatePolicies call takes one. Evaluation is CPU-bound: running more at once
// than there are cores adds no throughput, only memory and interleaving.
// The others wait in line, first come first served (a channel's waiters
// are served in order), so that under overload a call whose deadline
// passes in line fails without using the CPU, and the calls that do run
// finish, instead of every call in flight slowing down together until all
// of them time out. An evaluation gives its slot up while it waits for
// cluster data or a registry (slotLookup, slotVerifier).
type slots struct {
	ch      chan struct{}
	waiting prometheus.Gauge
	wait    prometheus.Histogram
}

func newSlots(n int, reg prometheus.Registerer) (*slots, error) {
	s := &slots{
		ch: make(chan struct{}, n),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "verdict_evaluations_waiting",
			Help: "Evaluations and ValidatePolicies calls waiting for one of the --max-evaluations slots.",
		}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "verdict_evaluation_wait_seconds",
			Help:    "Time an evaluation or a ValidatePolicies call waited for a slot (--max-evaluations) before it ran.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
	}
	for _, c := range []prometheus.Collector{s.waiting, s.wait} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// slot is the slot of one evaluation, carried in its context so that
// slotLookup can give it up and take it back.
type slot struct {
	s    *slots
	held bool
}

type slotKey struct{}

// acquire waits for a slot, in order of arrival, or for ctx to end. The
// returned context carries the slot; release it with done.
func (s *slots) acquire(ctx context.Context) (context.Context, *slot, error) {
	sl := &slot{s: s}
	if err := sl.take(ctx); err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, slotKey{}, sl), sl, nil
}

func (sl *slot) take(ctx context.Context) error {
	select {
	case sl.s.ch <- struct{}{}:
		sl.held = true
		sl.s.wait.Observe(0)
		return nil
	default:
	}
	start := time.Now()
	sl.s.waiting.Inc()
	defer sl.s.waiting.Dec()
	select {
	case sl.s.ch <- struct{}{}:
		sl.held = true
		sl.s.wait.Observe(time.Since(start).Seconds())
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done gives the slot back, if it is held.
func (sl *slot) done() {
	if sl != nil && sl.held {
		sl.held = false
		<-sl.s.ch
	}
}

// pause gives up the slot of ctx, if any, while the caller waits for I/O;
// resume takes it back (or gives up when ctx ends: the evaluation then
// stops early, as on any done context).
func pause(ctx context.Context) (resume func()) {
	sl, _ := ctx.Value(slotKey{}).(*slot)
	if sl == nil || !sl.held {
		return func() {}
	}
	sl.done()
	return func() { _ = sl.take(ctx) }
}

// slotLookup is an eval.Lookup that gives up its caller's slot while it
// waits for the lookup it wraps.
type slotLookup struct{ l eval.Lookup }

func (l slotLookup) ConfigMap(ctx context.Context, namespace, name string) (map[string]any, error) {
	defer pause(ctx)()
	return l.l.ConfigMap(ctx, namespace, name)
}

func (l slotLookup) APICall(ctx context.Context, call eval.APICall) (any, error) {
	defer pause(ctx)()
	return l.l.APICall(ctx, call)
}

func (l slotLookup) GlobalContext(ctx context.Context, name string) (any, error) {
	defer pause(ctx)()
	return l.l.GlobalContext(ctx, name)
}

func (l slotLookup) ImageData(ctx context.Context, reference string) (any, error) {
	defer pause(ctx)()
	return l.l.ImageData(ctx, reference)
}

func (l slotLookup) Namespace(ctx context.Context, name string) (map[string]any, error) {
	defer pause(ctx)()
	return l.l.Namespace(ctx, name)
}

func (l slotLookup) Params(ctx context.Context, q eval.ParamQuery) ([]map[string]any, error) {
	defer pause(ctx)()
	return l.l.Params(ctx, q)
}

func (l slotLookup) Resource(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	defer pause(ctx)()
	return l.l.Resource(ctx, apiVersion, kind, namespace, name)
}

func (l slotLookup) Resources(ctx context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]map[string]any, error) {
	defer pause(ctx)()
	return l.l.Resources(ctx, apiVersion, kind, namespace, selector)
}

var (
	_ eval.Lookup        = slotLookup{}
	_ eval.ImageVerifier = slotVerifier{}
)

// slotVerifier is an eval.ImageVerifier that gives up its caller's slot
// while it waits for the verifier it wraps.
type slotVerifier struct{ v eval.ImageVerifier }

func (v slotVerifier) VerifyImage(ctx context.Context, check eval.ImageCheck) (*eval.ImageVerified, error) {
	defer pause(ctx)()
	return v.v.VerifyImage(ctx, check)
}

func (v slotVerifier) ImageDigest(ctx context.Context, image string) (string, error) {
	defer pause(ctx)()
	return v.v.ImageDigest(ctx, image)
}

// slotCELData wraps each data source of src so that it gives up its
// caller's slot while it waits, as slotLookup does.
func slotCELData(src kyvernocel.Sources) kyvernocel.Sources {
	if src.Resources != nil {
		src.Resources = slotResources{src.Resources}
	}
	if src.HTTP != nil {
		src.HTTP = slotHTTP{src.HTTP}
	}
	if src.ImageData != nil {
		src.ImageData = slotImageData{src.ImageData}
	}
	if src.GlobalContext != nil {
		src.GlobalContext = slotGlobalContext{src.GlobalContext}
	}
	return src
}

type slotResources struct{ r kyvernocel.Resources }

func (s slotResources) GetResource(ctx context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	defer pause(ctx)()
	return s.r.GetResource(ctx, apiVersion, resource, namespace, name)
}

func (s slotResources) ListResources(ctx context.Context, apiVersion, resource, namespace string, labels map[string]string) (map[string]any, error) {
	defer pause(ctx)()
	return s.r.ListResources(ctx, apiVersion, resource, namespace, labels)
}

// ListAllNamespaces implements eval.AllNamespacesLister.
func (s slotResources) ListAllNamespaces(ctx context.Context, apiVersion, resource string) ([]map[string]any, error) {
	defer pause(ctx)()
	return eval.ListAllNamespaces(ctx, s.r, apiVersion, resource)
}

func (s slotResources) PostResource(ctx context.Context, apiVersion, resource, namespace string, data map[string]any) (map[string]any, error) {
	defer pause(ctx)()
	return s.r.PostResource(ctx, apiVersion, resource, namespace, data)
}

type slotHTTP struct{ h kyvernocel.HTTP }

func (s slotHTTP) Get(ctx context.Context, url string, headers map[string]string) (any, error) {
	defer pause(ctx)()
	return s.h.Get(ctx, url, headers)
}

func (s slotHTTP) Post(ctx context.Context, url string, body any, headers map[string]string) (any, error) {
	defer pause(ctx)()
	return s.h.Post(ctx, url, body, headers)
}

func (s slotHTTP) Client(caBundle string) (kyvernocel.HTTP, error) {
	h, err := s.h.Client(caBundle)
	if err != nil {
		return nil, err
	}
	return slotHTTP{h}, nil
}

type slotImageData struct{ d kyvernocel.ImageData }

func (s slotImageData) ImageData(ctx context.Context, image string) (map[string]any, error) {
	defer pause(ctx)()
	return s.d.ImageData(ctx, image)
}

type slotGlobalContext struct{ g kyvernocel.GlobalContext }

func (s slotGlobalContext) GlobalReference(ctx context.Context, name, projection string) (any, error) {
	defer pause(ctx)()
	return s.g.GlobalReference(ctx, name, projection)
}
