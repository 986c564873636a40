package webhookproxy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/promreg"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// Generator takes the generate intents of an admitted request. It must
// not block: the admission answer does not wait for generation, as
// Kyverno generates asynchronously.
type Generator interface {
	Generate(t Trigger, intents []*verdictv1.GenerateIntent)
}

// Trigger is the admitted request whose generate intents a Generator
// applies: its UID, its object and the kinds of the policies of the
// answer, for the events of the intents that fail.
type Trigger struct {
	// UID is the admission request's.
	UID string
	// APIVersion, Kind, Namespace and Name are the request's object.
	APIVersion, Kind, Namespace, Name string
	// PolicyKinds maps the policies of the answer, "namespace/name" (or
	// "name"), to their kind.
	PolicyKinds map[string]string
}

// PolicyKind is the kind of the intent's policy: as the answer listed it,
// else ClusterPolicy or Policy by its namespace.
func (t Trigger) PolicyKind(in *verdictv1.GenerateIntent) string {
	key := in.GetPolicy()
	if ns := in.GetPolicyNamespace(); ns != "" {
		key = ns + "/" + key
	}
	if k := t.PolicyKinds[key]; k != "" {
		return k
	}
	if in.GetPolicyNamespace() != "" {
		return "Policy"
	}
	return "ClusterPolicy"
}

// Defaults of ApplierOptions.
const (
	DefaultGenerateWorkers  = 2
	DefaultGenerateQueue    = 1024
	DefaultGenerateTimeout  = 10 * time.Second
	DefaultGenerateAttempts = 5
	DefaultGenerateBackoff  = 250 * time.Millisecond
	// DefaultFieldManager is the server-side apply field manager of
	// generated resources.
	DefaultFieldManager = "verdict"
)

// ApplierOptions configure an Applier. The zero value is usable.
type ApplierOptions struct {
	// Workers apply intents concurrently. Default 2.
	Workers int
	// QueueSize bounds the intents waiting for a worker; when the queue
	// is full an intent is dropped, logged and counted. Default 1024.
	QueueSize int
	// Timeout bounds one API call. Default 10 s.
	Timeout time.Duration
	// Attempts is how many times an intent is tried (a generated resource
	// whose namespace is being created with the trigger fails at first).
	// Default 5.
	Attempts int
	// Backoff is the wait before the second attempt, doubled for each
	// later one. Default 250 ms.
	Backoff time.Duration
	// FieldManager of the server-side applies. Default "verdict".
	FieldManager string
	// Logger receives one line per failed or dropped intent. Default:
	// discard.
	Logger *slog.Logger
	// Registry receives verdict_webhook_generate_total. Default: a new
	// registry.
	Registry *prometheus.Registry
	// Failed is told of each intent that failed after its attempts or
	// was dropped (queue full), with the error, for Kyverno's PolicyError
	// events (internal/kubeevents). It must not wait. Optional.
	Failed func(t Trigger, in *verdictv1.GenerateIntent, err error)
}

// Applier is the Generator that writes generate intents to a cluster:
//
//   - CREATE and UPDATE: server-side apply with FieldManager and force
//     (Kyverno forces its own applies too), so that applying the same
//     intent again changes nothing; a CREATE of a rule without
//     synchronize leaves an existing resource alone, as Kyverno's create
//     does;
//   - the clone-source UPDATE applies only the label
//     generate.kyverno.io/clone-source, so that the source's other
//     fields keep their managers;
//   - DELETE deletes the resource (absent is fine).
//
// Intents are queued and applied by Workers goroutines, each retried up
// to Attempts times. Failures never reach the admission answer; they are
// logged and counted in verdict_webhook_generate_total{outcome="failed"}.
type Applier struct {
	dyn    dynamic.Interface
	mapper meta.ResettableRESTMapper
	opts   ApplierOptions
	queue  chan job
	total  *prometheus.CounterVec
	wg     sync.WaitGroup
}

type job struct {
	trigger Trigger
	intent  *verdictv1.GenerateIntent
}

// NewApplier returns an Applier writing through dyn; mapper maps kinds to
// resources (restmapper.NewDeferredDiscoveryRESTMapper over a cached
// discovery client).
func NewApplier(dyn dynamic.Interface, mapper meta.ResettableRESTMapper, opts ApplierOptions) (*Applier, error) {
	if dyn == nil || mapper == nil {
		return nil, errors.New("webhookproxy: Applier needs a dynamic client and a REST mapper")
	}
	options.Positive(&opts.Workers, DefaultGenerateWorkers)
	options.Positive(&opts.QueueSize, DefaultGenerateQueue)
	options.Positive(&opts.Timeout, DefaultGenerateTimeout)
	options.Positive(&opts.Attempts, DefaultGenerateAttempts)
	options.Positive(&opts.Backoff, DefaultGenerateBackoff)
	opts.FieldManager = cmp.Or(opts.FieldManager, DefaultFieldManager)
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	opts.Registry = cmp.Or(opts.Registry, prometheus.NewRegistry())
	b := promreg.New(opts.Registry)
	total := b.CounterVec("verdict_webhook_generate_total", "Generate intents of admitted requests, by action (create, update, delete) and outcome (applied, exists, failed, dropped).", "action", "outcome")
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	return &Applier{dyn: dyn, mapper: mapper, opts: opts, queue: make(chan job, opts.QueueSize), total: total}, nil
}

// Run applies queued intents until ctx ends, then returns once the
// workers stopped; intents still queued are dropped.
func (a *Applier) Run(ctx context.Context) {
	for range a.opts.Workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-a.queue:
					a.applyWithRetries(ctx, j)
				}
			}
		}()
	}
	a.wg.Wait()
}

// Generate implements Generator: it queues intents without blocking.
func (a *Applier) Generate(t Trigger, intents []*verdictv1.GenerateIntent) {
	for _, in := range intents {
		select {
		case a.queue <- job{trigger: t, intent: in}:
		default:
			a.total.WithLabelValues(actionName(in.GetAction()), "dropped").Inc()
			a.opts.Logger.Error("generate intent dropped: queue full", "uid", t.UID, "policy", in.GetPolicy(), "rule", in.GetRule(), "queue", a.opts.QueueSize)
			if a.opts.Failed != nil {
				a.opts.Failed(t, in, fmt.Errorf("generate queue full (%d intents)", a.opts.QueueSize))
			}
		}
	}
}

func actionName(a verdictv1.GenerateAction) string {
	switch a {
	case verdictv1.GenerateAction_GENERATE_ACTION_CREATE:
		return "create"
	case verdictv1.GenerateAction_GENERATE_ACTION_UPDATE:
		return "update"
	case verdictv1.GenerateAction_GENERATE_ACTION_DELETE:
		return "delete"
	}
	return "unknown"
}

func (a *Applier) applyWithRetries(ctx context.Context, j job) {
	in := j.intent
	backoff := a.opts.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		var outcome string
		outcome, err = a.Apply(ctx, in)
		if err == nil {
			a.total.WithLabelValues(actionName(in.GetAction()), outcome).Inc()
			return
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= a.opts.Attempts {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(backoff):
			backoff *= 2
			continue
		}
		break
	}
	a.total.WithLabelValues(actionName(in.GetAction()), "failed").Inc()
	a.opts.Logger.Error("generate", "uid", j.trigger.UID, "policy", in.GetPolicy(), "rule", in.GetRule(), "action", actionName(in.GetAction()), "error", err)
	if a.opts.Failed != nil {
		a.opts.Failed(j.trigger, in, err)
	}
}

// permanentError is an intent that no retry can apply.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Apply writes one intent now and returns its outcome: "applied", or
// "exists" for a CREATE of a rule without synchronize whose resource is
// already there.
func (a *Applier) Apply(ctx context.Context, in *verdictv1.GenerateIntent) (string, error) {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(in.GetResource(), &obj.Object); err != nil || obj.Object == nil {
		return "", &permanentError{fmt.Errorf("generate intent resource: not a JSON object: %v", err)}
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" || obj.GetName() == "" {
		return "", &permanentError{fmt.Errorf("generate intent resource: apiVersion, kind and metadata.name are required, got %q %q %q", obj.GetAPIVersion(), gvk.Kind, obj.GetName())}
	}
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset() // a CRD installed since discovery was read
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return "", fmt.Errorf("map %s: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
			obj.SetNamespace(ns)
		}
		ri = a.dyn.Resource(mapping.Resource).Namespace(ns)
	} else {
		obj.SetNamespace("")
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	switch in.GetAction() {
	case verdictv1.GenerateAction_GENERATE_ACTION_DELETE:
		err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("delete %s %s: %w", gvk.Kind, key(obj), err)
		}
		return "applied", nil
	case verdictv1.GenerateAction_GENERATE_ACTION_CREATE, verdictv1.GenerateAction_GENERATE_ACTION_UPDATE:
	default:
		return "", &permanentError{fmt.Errorf("generate intent: unknown action %v", in.GetAction())}
	}
	if in.GetAction() == verdictv1.GenerateAction_GENERATE_ACTION_CREATE && !in.GetSynchronize() {
		_, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err == nil {
			return "exists", nil
		}
		if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("get %s %s: %w", gvk.Kind, key(obj), err)
		}
	}
	if in.GetCloneSource() {
		obj = labelOnly(obj)
	}
	stripServerFields(obj)
	if _, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: a.opts.FieldManager, Force: true}); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return "", &permanentError{fmt.Errorf("apply %s %s: %w", gvk.Kind, key(obj), err)}
		}
		return "", fmt.Errorf("apply %s %s: %w", gvk.Kind, key(obj), err)
	}
	return "applied", nil
}

// labelOnly is the apply configuration of a clone source: its identity
// and the clone-source label.
func labelOnly(src *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetGroupVersionKind(src.GroupVersionKind())
	out.SetName(src.GetName())
	out.SetNamespace(src.GetNamespace())
	const l = "generate.kyverno.io/clone-source"
	out.SetLabels(map[string]string{l: src.GetLabels()[l]})
	return out
}

// stripServerFields removes the fields the API server owns, which an
// apply configuration must not carry (resourceVersion would make the
// apply conditional).
func stripServerFields(obj *unstructured.Unstructured) {
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
}

func key(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func ptr[T any](v T) *T { return &v }
