package cleanup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/generate"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// The GeneratingPolicy kinds whose deletion the runner follows.
var (
	GeneratingPolicies           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "generatingpolicies"}
	NamespacedGeneratingPolicies = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespacedgeneratingpolicies"}
)

// generating is what the runner remembers of a GeneratingPolicy it saw:
// whether its downstream resources go when it is deleted (synchronize
// enabled, orphanDownstreamOnPolicyDelete not).
type generating struct {
	name, namespace  string
	deleteDownstream bool
}

// ErrNoDiscovery is the error of a deleted GeneratingPolicy whose
// downstream resources the runner cannot look for: it has no discovery
// client (Options.Discovery).
var ErrNoDiscovery = errors.New("no discovery client: the downstream resources of a deleted GeneratingPolicy are not deleted")

// loadGenerating reads the cluster's GeneratingPolicies and
// NamespacedGeneratingPolicies (of Options.Namespace). A kind the cluster
// does not serve has none; a policy that does not decode keeps what the
// runner knew of it.
func (r *Runner) loadGenerating(ctx context.Context) (map[string]generating, error) {
	out := map[string]generating{}
	for _, res := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
	}{{GeneratingPolicies, ""}, {NamespacedGeneratingPolicies, r.opts.Namespace}} {
		items, err := r.list(ctx, res.gvr, res.namespace, "")
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", res.gvr.Resource, err)
		}
		for _, u := range items {
			key := u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
			doc, err := gpol.Policies.DecodePolicy(userDocument(&u))
			if err != nil {
				if known, ok := r.generating[key]; ok {
					out[key] = known
				}
				r.opts.Logger.Warn("generating policy does not decode", "policy", key, "error", err)
				continue
			}
			spec := &doc.Spec
			out[key] = generating{
				name: u.GetName(), namespace: u.GetNamespace(),
				deleteDownstream: spec.SynchronizationEnabled() && !spec.OrphanDownstreamOnPolicyDeleteEnabled(),
			}
		}
	}
	return out, nil
}

// SyncGenerating reads the GeneratingPolicies and, for each one seen by
// an earlier call and gone now whose downstream resources go with it
// (synchronize enabled, orphanDownstreamOnPolicyDelete not), deletes
// them, as Kyverno's policy controller does when such a policy is
// deleted. The first call only records what it finds. It returns the
// number of resources deleted.
func (r *Runner) SyncGenerating(ctx context.Context) (int, error) {
	now, err := r.loadGenerating(ctx)
	if err != nil {
		return 0, err
	}
	prev, first := r.generating, r.generating == nil
	r.generating = now
	if first {
		return 0, nil
	}
	var keys []string
	for key, g := range prev {
		if _, ok := now[key]; !ok && g.deleteDownstream {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	n := 0
	var errs []error
	for _, key := range keys {
		d, err := r.DeleteDownstream(ctx, prev[key].name, prev[key].namespace)
		n += d
		if err != nil {
			errs = append(errs, fmt.Errorf("downstream of %s: %w", key, err))
		}
		r.opts.Logger.Info("generating policy deleted: downstream deleted", "policy", key, "deleted", d, "error", err)
	}
	return n, errors.Join(errs...)
}

// DeleteDownstream deletes what the GeneratingPolicy name (of namespace,
// for a NamespacedGeneratingPolicy, whose resources are in its namespace)
// generated: the objects of every resource the cluster serves that the
// runner may list and delete, labelled generate.kyverno.io/policy-name:
// name and without generate.kyverno.io/rule-name (which the generate
// rules of the kyverno.io kinds carry). At most Options.MaxDeletions, then
// ErrMaxDeletions. A resource the runner may not list is skipped.
func (r *Runner) DeleteDownstream(ctx context.Context, name, namespace string) (int, error) {
	if r.opts.Discovery == nil {
		return 0, ErrNoDiscovery
	}
	gvrs, err := r.deletable()
	if err != nil {
		return 0, err
	}
	selector := generate.LabelPolicyName + "=" + name + ",!" + generate.LabelRuleName
	p := Policy{Policy: &dpol.Policy{}, Key: "downstream/" + namespace + "/" + name}
	n := 0
	var errs []error
	for _, gvr := range gvrs {
		items, err := r.list(ctx, gvr, namespace, selector)
		if err != nil {
			if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				errs = append(errs, fmt.Errorf("list %s: %w", gvr, err))
			}
			continue
		}
		for i := range items {
			if n == r.opts.MaxDeletions {
				return n, errors.Join(append(errs, ErrMaxDeletions)...)
			}
			if err := r.delete(ctx, p, gvr, &items[i]); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

// deletable are the preferred versions of the resources the cluster
// serves that can be listed and deleted, sorted; subresources left out.
func (r *Runner) deletable() ([]schema.GroupVersionResource, error) {
	lists, err := r.opts.Discovery.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") {
				continue
			}
			out = append(out, gv.WithResource(res.Name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}
