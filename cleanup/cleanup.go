package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/internal/ctxtime"
	"github.com/verdict-policy/verdict/internal/options"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// Defaults of Options.
const (
	// DefaultMaxDeletions is the most resources one run of one policy
	// deletes; the run stops there with ErrMaxDeletions.
	DefaultMaxDeletions = 1000
	// DefaultPageSize is the size of the pages resources are listed in.
	DefaultPageSize = 500
	// DefaultResync is how often the policies are read again between
	// runs.
	DefaultResync = time.Minute
)

// ErrMaxDeletions ends a run that reached Options.MaxDeletions.
var ErrMaxDeletions = errors.New("the run reached its deletion limit (--max-deletions)")

// The resources the runner reads.
var (
	DeletingPolicies           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "deletingpolicies"}
	NamespacedDeletingPolicies = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespaceddeletingpolicies"}
	PolicyExceptions           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "policyexceptions"}
	Namespaces                 = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Options configure a Runner. Client is required.
type Options struct {
	// Client reads the policies and lists and deletes the resources.
	Client dynamic.Interface
	// Namespace limits the NamespacedDeletingPolicies read to one
	// namespace. Default: every namespace.
	Namespace string
	// DisableExceptions ignores the policies.kyverno.io PolicyExceptions.
	DisableExceptions bool
	// MaxDeletions is the most resources one run of one policy deletes.
	// Default DefaultMaxDeletions.
	MaxDeletions int
	// PageSize is the page size of the lists. Default DefaultPageSize.
	PageSize int64
	// Resync is how often the policies are read again. Default
	// DefaultResync.
	Resync time.Duration
	// DryRun deletes nothing: the runs log what they would delete.
	DryRun bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives what the runs do. Default: discard.
	Logger *slog.Logger
	// Discovery finds the resources the downstream of a deleted
	// GeneratingPolicy may be in (SyncGenerating). Default: none (that
	// downstream is not deleted, ErrNoDiscovery).
	Discovery Discovery
}

// Discovery lists the resources a cluster serves, at their preferred
// versions (a client-go discovery client).
type Discovery interface {
	ServerPreferredResources() ([]*metav1.APIResourceList, error)
}

func (o Options) withDefaults() Options {
	options.Positive(&o.MaxDeletions, DefaultMaxDeletions)
	options.Positive(&o.PageSize, DefaultPageSize)
	options.Positive(&o.Resync, DefaultResync)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Runner runs the cluster's DeletingPolicies on their schedules.
type Runner struct {
	opts Options
	// next is the next run of each policy, by key and hash.
	next map[string]time.Time
	// loaded is the time of the last Load that succeeded (unix nanos).
	loaded atomic.Int64
	// generating are the GeneratingPolicies the last SyncGenerating saw,
	// by kind/namespace/name (nil before the first).
	generating map[string]generating
}

// New returns a Runner.
func New(opts Options) (*Runner, error) {
	if opts.Client == nil {
		return nil, errors.New("cleanup: no client")
	}
	return &Runner{opts: opts.withDefaults(), next: map[string]time.Time{}}, nil
}

// Policy is a DeletingPolicy of the cluster, compiled.
type Policy struct {
	*dpol.Policy
	// Key is kind/namespace/name.
	Key string
}

// Load reads and compiles the cluster's DeletingPolicies and
// NamespacedDeletingPolicies, and its policies.kyverno.io
// PolicyExceptions. A policy that does not compile is logged and left
// out; so is an exception.
func (r *Runner) Load(ctx context.Context) ([]Policy, []*vpol.Exception, error) {
	var out []Policy
	for _, res := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
	}{{DeletingPolicies, ""}, {NamespacedDeletingPolicies, r.opts.Namespace}} {
		items, err := r.list(ctx, res.gvr, res.namespace, "")
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", res.gvr.Resource, err)
		}
		for _, u := range items {
			doc, err := dpol.Policies.DecodePolicy(userDocument(&u))
			var p *dpol.Policy
			if err == nil {
				p, err = dpol.Compile(doc)
			}
			key := u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
			if err != nil {
				r.opts.Logger.Warn("deleting policy does not compile; not run", "policy", key, "error", err)
				continue
			}
			out = append(out, Policy{Policy: p, Key: key})
		}
	}
	var excs []*vpol.Exception
	if !r.opts.DisableExceptions {
		items, err := r.list(ctx, PolicyExceptions, "", "")
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("list %s: %w", PolicyExceptions.Resource, err)
		}
		for _, u := range items {
			doc, err := vpol.DecodeException(userDocument(&u))
			var e *vpol.Exception
			if err == nil {
				e, err = vpol.CompileException(doc)
			}
			if err != nil {
				r.opts.Logger.Warn("policy exception does not compile; not applied", "exception", u.GetNamespace()+"/"+u.GetName(), "error", err)
				continue
			}
			excs = append(excs, e)
		}
	}
	r.loaded.Store(r.opts.Now().UnixNano())
	return out, excs, nil
}

// Healthy reports whether the policies were read within three Resync
// periods (the runner's liveness).
func (r *Runner) Healthy() bool {
	last := r.loaded.Load()
	return last != 0 && r.opts.Now().Sub(time.Unix(0, last)) < 3*r.opts.Resync
}

// Run runs the policies on their schedules until ctx ends: it reads them
// every Resync, runs each one whose schedule came (the first run of a
// policy is its schedule's first time after the runner saw it), and
// sleeps until the next run or read. It returns ctx's error, never nil.
func (r *Runner) Run(ctx context.Context) error {
	for {
		policies, excs, err := r.Load(ctx)
		if err != nil {
			r.opts.Logger.Error("reading deleting policies", "error", err)
		}
		if _, err := r.SyncGenerating(ctx); err != nil { // downstream.go
			r.opts.Logger.Error("deleting the downstream of deleted generating policies", "error", err)
		}
		now := r.opts.Now()
		wake := now.Add(r.opts.Resync)
		seen := map[string]bool{}
		for _, p := range policies {
			id := p.Key + "@" + p.Hash
			seen[id] = true
			next, ok := r.next[id]
			if !ok {
				next = p.Schedule.Next(now)
			}
			if !now.Before(next) {
				s, err := r.Execute(ctx, p, excs)
				r.opts.Logger.Info("deleting policy ran", "policy", p.Key, "selected", s.Selected, "deleted", s.Deleted, "error", err)
				next = p.Schedule.Next(now)
			}
			r.next[id] = next
			if next.Before(wake) {
				wake = next
			}
		}
		for id := range r.next {
			if !seen[id] {
				delete(r.next, id)
			}
		}
		if err := ctxtime.Sleep(ctx, wake.Sub(r.opts.Now())); err != nil {
			return err
		}
	}
}

// Summary is what one run of a policy did.
type Summary struct {
	// Selected is the number of resources the matchConstraints selected;
	// Deleted those deleted (in a dry run, those that would be).
	Selected, Deleted int
	// Deletions are the deleted resources, "group/version/resource
	// namespace/name".
	Deletions []string
}

// Execute runs one policy now: it lists the resources of its
// matchConstraints' resource rules (a namespaced policy's in its
// namespace), evaluates each (engine/dpol, namespaceObject the
// resource's Namespace, the CEL resource library reading the cluster),
// and deletes those the policy selects, with its propagation policy and
// the resource's UID as precondition (a resource recreated since the
// list stays). Wildcards and subresources in the resource rules are not
// listed (logged). It stops at Options.MaxDeletions (ErrMaxDeletions).
func (r *Runner) Execute(ctx context.Context, p Policy, excs []*vpol.Exception) (Summary, error) {
	var s Summary
	namespaces := map[string]map[string]any{}
	nsObject := func(name string) map[string]any {
		if name == "" {
			return nil
		}
		if o, ok := namespaces[name]; ok {
			return o
		}
		u, err := r.opts.Client.Resource(Namespaces).Get(ctx, name, metav1.GetOptions{})
		var o map[string]any
		if err == nil {
			o = u.Object
		}
		namespaces[name] = o
		return o
	}
	sources := kyvernocel.Sources{Resources: clusterResources{c: r.opts.Client}}
	var errs []error
	for _, gvr := range r.resources(p) {
		items, err := r.list(ctx, gvr, p.Namespace, "")
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", gvr, err))
			continue
		}
		for _, u := range items {
			in := vpol.NewInput(vpol.Request{
				Resource: gvr.Resource, ResourceGroup: gvr.Group, ResourceVersion: gvr.Version,
				Name: u.GetName(), Namespace: u.GetNamespace(), Operation: "CREATE",
				Object: u.Object, NamespaceObject: nsObject(u.GetNamespace()),
				Sources: sources, Now: r.opts.Now(),
			})
			res := p.Evaluate(ctx, in, excs)
			if res.Matched {
				s.Selected++
			}
			if res.Err != nil {
				errs = append(errs, fmt.Errorf("%s %s/%s: %s: %w", gvr, u.GetNamespace(), u.GetName(), res.Path, res.Err))
				continue
			}
			if !res.Delete {
				continue
			}
			if s.Deleted == r.opts.MaxDeletions {
				return s, errors.Join(append(errs, fmt.Errorf("%w: %d", ErrMaxDeletions, r.opts.MaxDeletions))...)
			}
			if err := r.delete(ctx, p, gvr, &u); err != nil {
				errs = append(errs, err)
				continue
			}
			s.Deleted++
			s.Deletions = append(s.Deletions, fmt.Sprintf("%s %s/%s", gvr, u.GetNamespace(), u.GetName()))
		}
	}
	return s, errors.Join(errs...)
}

func (r *Runner) delete(ctx context.Context, p Policy, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	if r.opts.DryRun {
		r.opts.Logger.Info("would delete (dry run)", "policy", p.Key, "resource", gvr.String(), "namespace", u.GetNamespace(), "name", u.GetName())
		return nil
	}
	opts := metav1.DeleteOptions{}
	if uid := u.GetUID(); uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if p.Propagation != "" {
		prop := p.Propagation
		opts.PropagationPolicy = &prop
	}
	ri := r.opts.Client.Resource(gvr)
	var err error
	if ns := u.GetNamespace(); ns != "" {
		err = ri.Namespace(ns).Delete(ctx, u.GetName(), opts)
	} else {
		err = ri.Delete(ctx, u.GetName(), opts)
	}
	switch {
	case err == nil:
		r.opts.Logger.Info("deleted", "policy", p.Key, "resource", gvr.String(), "namespace", u.GetNamespace(), "name", u.GetName())
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone, or another object of that name now
	}
	return fmt.Errorf("delete %s %s/%s: %w", gvr, u.GetNamespace(), u.GetName(), err)
}

// resources are the API resources the policy's resource rules name,
// sorted; a wildcard or a subresource is logged and left out.
func (r *Runner) resources(p Policy) []schema.GroupVersionResource {
	mc := p.Document().Spec.MatchConstraints
	if mc == nil {
		return nil
	}
	set := map[schema.GroupVersionResource]bool{}
	for _, rule := range mc.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, v := range rule.APIVersions {
				for _, res := range rule.Resources {
					if g == "*" || v == "*" || strings.Contains(res, "*") || strings.Contains(res, "/") {
						r.opts.Logger.Warn("resource rule not listed: name its groups, versions and resources without wildcards or subresources", "policy", p.Key, "group", g, "version", v, "resource", res)
						continue
					}
					set[schema.GroupVersionResource{Group: g, Version: v, Resource: res}] = true
				}
			}
		}
	}
	out := make([]schema.GroupVersionResource, 0, len(set))
	for gvr := range set {
		out = append(out, gvr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// list lists a resource in pages (namespace "" for every namespace).
func (r *Runner) list(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) ([]unstructured.Unstructured, error) {
	var ri dynamic.ResourceInterface = r.opts.Client.Resource(gvr)
	if namespace != "" {
		ri = r.opts.Client.Resource(gvr).Namespace(namespace)
	}
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: r.opts.PageSize, LabelSelector: selector}
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if l.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// userDocument is an object's document as a user wrote it (the fields
// the API server maintains left out), for the strict decoders.
func userDocument(u *unstructured.Unstructured) map[string]any {
	meta := map[string]any{"name": u.GetName()}
	if ns := u.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	if l := u.GetLabels(); len(l) > 0 {
		meta["labels"] = toAny(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		meta["annotations"] = toAny(a)
	}
	doc := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta}
	if spec, ok := u.Object["spec"]; ok {
		doc["spec"] = spec
	}
	return doc
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// clusterResources serves the CEL resource library from the cluster
// (resource.Get and resource.List; resource.Post is refused).
type clusterResources struct{ c dynamic.Interface }

func (c clusterResources) gvr(apiVersion, resource string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return gv.WithResource(resource), nil
}

func (c clusterResources) GetResource(ctx context.Context, apiVersion, resource, namespace, name string) (map[string]any, error) {
	gvr, err := c.gvr(apiVersion, resource)
	if err != nil {
		return nil, err
	}
	var u *unstructured.Unstructured
	if namespace != "" {
		u, err = c.c.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	} else {
		u, err = c.c.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %s/%s: %w", gvr, namespace, name, engine.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

func (c clusterResources) ListResources(ctx context.Context, apiVersion, resource, namespace string, labels map[string]string) (map[string]any, error) {
	gvr, err := c.gvr(apiVersion, resource)
	if err != nil {
		return nil, err
	}
	var sel []string
	for k, v := range labels {
		sel = append(sel, k+"="+v)
	}
	sort.Strings(sel)
	opts := metav1.ListOptions{LabelSelector: strings.Join(sel, ",")}
	var l *unstructured.UnstructuredList
	if namespace != "" {
		l, err = c.c.Resource(gvr).Namespace(namespace).List(ctx, opts)
	} else {
		l, err = c.c.Resource(gvr).List(ctx, opts)
	}
	if err != nil {
		return nil, err
	}
	items := make([]any, len(l.Items))
	for i := range l.Items {
		items[i] = l.Items[i].Object
	}
	return map[string]any{"apiVersion": apiVersion, "kind": "List", "items": items}, nil
}

func (c clusterResources) PostResource(context.Context, string, string, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("resource.Post is not allowed in a DeletingPolicy run")
}
