package kubesource

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/verdict-policy/verdict/engine/dpol"
	"github.com/verdict-policy/verdict/engine/gpol"
	"github.com/verdict-policy/verdict/engine/ivpol"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/mpol"
	"github.com/verdict-policy/verdict/engine/vap"
	"github.com/verdict-policy/verdict/engine/vpol"
	"github.com/verdict-policy/verdict/internal/kubeconfig"
	"github.com/verdict-policy/verdict/server"
)

// The resources the source watches.
var (
	ClusterPolicies  = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}
	Policies         = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "policies"}
	PolicyExceptions = schema.GroupVersionResource{Group: "kyverno.io", Version: "v2", Resource: "policyexceptions"}

	// The policies.kyverno.io resources, at the version Kyverno 1.19's
	// CRDs serve and store; a cluster whose CRDs serve only an older
	// version is read at the newest one it serves (celVersions).
	ValidatingPolicies           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "validatingpolicies"}
	NamespacedValidatingPolicies = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespacedvalidatingpolicies"}
	CELPolicyExceptions          = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "policyexceptions"}
	MutatingPolicies             = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "mutatingpolicies"}
	NamespacedMutatingPolicies   = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespacedmutatingpolicies"}

	ImageValidatingPolicies           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "imagevalidatingpolicies"}
	NamespacedImageValidatingPolicies = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespacedimagevalidatingpolicies"}

	GeneratingPolicies           = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "generatingpolicies"}
	NamespacedGeneratingPolicies = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespacedgeneratingpolicies"}
	DeletingPolicies             = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "deletingpolicies"}
	NamespacedDeletingPolicies   = schema.GroupVersionResource{Group: vpol.Group, Version: "v1", Resource: "namespaceddeletingpolicies"}

	// Kubernetes' ValidatingAdmissionPolicies and their bindings, which
	// Kyverno's background scans report on (the API server enforces
	// them).
	ValidatingAdmissionPolicies       = schema.GroupVersionResource{Group: vap.Group, Version: "v1", Resource: "validatingadmissionpolicies"}
	ValidatingAdmissionPolicyBindings = schema.GroupVersionResource{Group: vap.Group, Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// celVersions are the versions of the policies.kyverno.io resources the
// source tries, newest first: Kyverno 1.19 serves v1, v1beta1 and (but for
// NamespacedValidatingPolicies and NamespacedMutatingPolicies) v1alpha1,
// with the same spec in each.
var celVersions = []string{"v1", "v1beta1", "v1alpha1"}

// DefaultDebounce is how long a Source collects changes before it reports
// a snapshot, when Options.Debounce is zero.
const DefaultDebounce = 200 * time.Millisecond

// Options configure a Source. Client is required; the other fields have
// defaults, filled by withDefaults at the top of New.
type Options struct {
	// Client reads the policies. Required. NewClient builds one from a
	// kubeconfig or the pod's service account.
	Client dynamic.Interface
	// Namespace limits the namespaced Policies,
	// NamespacedValidatingPolicies and NamespacedMutatingPolicies read to
	// one namespace. Default: every
	// namespace.
	Namespace string
	// DisableExceptions ignores the cluster's PolicyExceptions, of
	// kyverno.io/v2 and of policies.kyverno.io (Kyverno's
	// --enablePolicyException=false). Default: they are read and applied,
	// when the cluster serves them.
	DisableExceptions bool
	// ExceptionNamespace reads PolicyExceptions (of both groups) of this
	// namespace only (Kyverno's --exceptionNamespace). Default: every
	// namespace.
	ExceptionNamespace string
	// DisableVAPs ignores the cluster's ValidatingAdmissionPolicies and
	// ValidatingAdmissionPolicyBindings (Kyverno's
	// --validatingAdmissionPolicyReports=false). Default: they are read
	// (at v1, when the cluster serves it), so that background scans report
	// on the policies labelled reports.kyverno.io/enabled: "true".
	DisableVAPs bool
	// Debounce is how long the source waits after a change for more
	// changes before it reports one snapshot for all of them (a kubectl
	// apply of a folder of policies). Default 200ms.
	Debounce time.Duration
	// Logger receives watch errors. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Source is a server.PolicySource that holds the kyverno.io/v1
// ClusterPolicies and Policies, the kyverno.io/v2 PolicyExceptions, the
// policies.kyverno.io ValidatingPolicies, NamespacedValidatingPolicies,
// MutatingPolicies, NamespacedMutatingPolicies, ImageValidatingPolicies,
// NamespacedImageValidatingPolicies, GeneratingPolicies, DeletingPolicies
// (both scopes) and PolicyExceptions, and the
// admissionregistration.k8s.io/v1
// ValidatingAdmissionPolicies and their bindings of a cluster, through
// informers.
type Source struct {
	opts Options
}

var _ server.PolicySource = (*Source)(nil)

// New returns a Source reading with opts.Client.
func New(opts Options) (*Source, error) {
	if opts.Client == nil {
		return nil, errors.New("kubernetes policy source: no client")
	}
	return &Source{opts: opts.withDefaults()}, nil
}

// Name implements server.PolicySource.
func (s *Source) Name() string { return "kubernetes" }

// watched is one resource the source reads.
type watched struct {
	gvr       schema.GroupVersionResource
	kind      string
	namespace string // "" for all namespaces (or a cluster-scoped resource)
	optional  bool   // a cluster that does not serve it is not an error
	// versions are the versions tried, in order, when the cluster does
	// not serve gvr.Version; the first one served is watched.
	versions []string
}

// resources are the resources the options ask for.
func (s *Source) resources() []watched {
	out := []watched{
		{gvr: ClusterPolicies, kind: kyverno.KindClusterPolicy},
		{gvr: Policies, kind: kyverno.KindPolicy, namespace: s.opts.Namespace},
	}
	out = append(out,
		watched{gvr: ValidatingPolicies, kind: vpol.KindValidatingPolicy, optional: true, versions: celVersions},
		watched{gvr: NamespacedValidatingPolicies, kind: vpol.KindNamespacedValidatingPolicy, namespace: s.opts.Namespace, optional: true, versions: celVersions},
		watched{gvr: MutatingPolicies, kind: mpol.KindMutatingPolicy, optional: true, versions: celVersions},
		watched{gvr: NamespacedMutatingPolicies, kind: mpol.KindNamespacedMutatingPolicy, namespace: s.opts.Namespace, optional: true, versions: celVersions},
		watched{gvr: ImageValidatingPolicies, kind: ivpol.KindImageValidatingPolicy, optional: true, versions: celVersions},
		watched{gvr: NamespacedImageValidatingPolicies, kind: ivpol.KindNamespacedImageValidatingPolicy, namespace: s.opts.Namespace, optional: true, versions: celVersions},
		watched{gvr: GeneratingPolicies, kind: gpol.KindGeneratingPolicy, optional: true, versions: celVersions},
		watched{gvr: NamespacedGeneratingPolicies, kind: gpol.KindNamespacedGeneratingPolicy, namespace: s.opts.Namespace, optional: true, versions: celVersions},
		watched{gvr: DeletingPolicies, kind: dpol.KindDeletingPolicy, optional: true, versions: celVersions},
		watched{gvr: NamespacedDeletingPolicies, kind: dpol.KindNamespacedDeletingPolicy, namespace: s.opts.Namespace, optional: true, versions: celVersions},
	)
	if !s.opts.DisableVAPs {
		out = append(out,
			watched{gvr: ValidatingAdmissionPolicies, kind: vap.KindPolicy, optional: true},
			watched{gvr: ValidatingAdmissionPolicyBindings, kind: vap.KindBinding, optional: true},
		)
	}
	if !s.opts.DisableExceptions {
		out = append(out,
			watched{gvr: PolicyExceptions, kind: kyverno.KindPolicyException, namespace: s.opts.ExceptionNamespace, optional: true},
			watched{gvr: CELPolicyExceptions, kind: vpol.KindPolicyException, namespace: s.opts.ExceptionNamespace, optional: true, versions: celVersions},
		)
	}
	return out
}

// served lists w once at each of its versions until the cluster serves
// one, and returns w at that version. The error is the last list's.
func (s *Source) served(ctx context.Context, w watched) (watched, error) {
	versions := w.versions
	if len(versions) == 0 {
		versions = []string{w.gvr.Version}
	}
	var err error
	for _, v := range versions {
		w.gvr.Version = v
		ri := s.opts.Client.Resource(w.gvr)
		if w.namespace != "" {
			_, err = ri.Namespace(w.namespace).List(ctx, metav1.ListOptions{Limit: 1})
		} else {
			_, err = ri.List(ctx, metav1.ListOptions{Limit: 1})
		}
		if !apierrors.IsNotFound(err) {
			break
		}
	}
	return w, err
}

// Run implements server.PolicySource. It first lists every resource once,
// and fails when the cluster does not serve ClusterPolicies or Policies
// (Kyverno's CRDs are not installed) or refuses to list a resource (RBAC);
// PolicyExceptions, the policies.kyverno.io kinds and
// ValidatingAdmissionPolicies that are not served are left out, with a
// warning (a cluster with Kyverno's CRDs before 1.14
// has none of the latter). Then
// it starts the informers, reports the first snapshot once all are
// synced, and a new snapshot after every change (create, update, delete),
// Debounce after the first change of a burst.
func (s *Source) Run(ctx context.Context, update func(server.Snapshot)) error {
	var res []watched
	for _, w := range s.resources() {
		w, err := s.served(ctx, w)
		switch {
		case ctx.Err() != nil:
			return nil
		case apierrors.IsNotFound(err) && w.optional:
			s.opts.Logger.WarnContext(ctx, "the cluster does not serve "+w.gvr.GroupResource().String()+"; they are not applied", "error", err)
			continue
		case apierrors.IsNotFound(err):
			return fmt.Errorf("list %s: the cluster does not serve it (are Kyverno's CRDs installed?): %w", w.gvr.GroupResource(), err)
		case err != nil:
			return fmt.Errorf("list %s: %w", w.gvr.GroupResource(), err)
		}
		res = append(res, w)
	}

	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	informers := make([]cache.SharedIndexInformer, len(res))
	for i, w := range res {
		inf := dynamicinformer.NewFilteredDynamicInformer(s.opts.Client, w.gvr, w.namespace, 0, cache.Indexers{}, nil).Informer()
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watch %s: %w", w.gvr.GroupResource(), err)
		}
		_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
			s.opts.Logger.WarnContext(ctx, "kubernetes policy watch failed; retrying", "resource", w.gvr.GroupResource().String(), "error", err)
		})
		informers[i] = inf
	}
	// The informers stop with ctx; Run waits for them.
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, inf := range informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // ctx is done
	}

	timer := time.NewTimer(s.opts.Debounce)
	timer.Stop()
	defer timer.Stop()
	for {
		// Drain a notification that the first snapshot already covers.
		select {
		case <-changed:
		default:
		}
		lists := make([]list, len(res))
		for i, w := range res {
			lists[i] = list{w: w, objects: informers[i].GetStore().List()}
		}
		update(snapshot(lists))
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		timer.Reset(s.opts.Debounce)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
	}
}

// list is the content of one informer's store.
type list struct {
	w       watched
	objects []any
}

// snapshot turns the objects of the informers' stores into a snapshot
// sorted by kind, namespace and name.
func snapshot(lists []list) server.Snapshot {
	type doc struct {
		kind, group, namespace, name string
		d                            server.Document
	}
	var docs []doc
	var snap server.Snapshot
	for _, l := range lists {
		for _, o := range l.objects {
			u, ok := o.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if u.GetKind() == "" {
				u = u.DeepCopy()
				u.SetAPIVersion(l.w.gvr.GroupVersion().String())
				u.SetKind(l.w.kind)
			}
			kind := u.GetKind()
			group := u.GroupVersionKind().Group
			if group == vpol.Group && kind == vpol.KindPolicyException {
				// Not to be confused with kyverno.io's PolicyException
				// of the same namespace and name.
				kind += "." + vpol.Group
			}
			ref := Origin(kind, u.GetNamespace(), u.GetName())
			b, err := policyJSON(u)
			if err != nil {
				snap.Errors = append(snap.Errors, server.SourceError{Origin: ref, Err: err})
				continue
			}
			docs = append(docs, doc{u.GetKind(), group, u.GetNamespace(), u.GetName(), server.Document{Origin: ref, JSON: b}})
		}
	}
	sort.Slice(docs, func(i, j int) bool {
		a, b := docs[i], docs[j]
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.group, b.group),
			cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name)) < 0
	})
	for _, d := range docs {
		snap.Documents = append(snap.Documents, d.d)
	}
	return snap
}

// Origin is the origin of an object in snapshots and in the server's
// ListPolicies: "kubernetes:ClusterPolicy/name", or for the namespaced
// kinds "kubernetes:Policy/namespace/name" and
// "kubernetes:PolicyException/namespace/name". The source names the
// policies.kyverno.io PolicyException by kind and group, as kubectl does:
// "kubernetes:PolicyException.policies.kyverno.io/namespace/name".
func Origin(kind, namespace, name string) string {
	if namespace != "" {
		return "kubernetes:" + kind + "/" + namespace + "/" + name
	}
	return "kubernetes:" + kind + "/" + name
}

// lastApplied is the annotation kubectl apply keeps the previous
// configuration in: a copy of the policy, which changes nothing.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// policyJSON is the policy document of an object as a user wrote it:
// apiVersion, kind, name, namespace, labels, annotations and spec. The
// fields the API server maintains (uid, resourceVersion, generation,
// managedFields, timestamps, status) are left out, so that the document
// and its content hash change only when the policy does, and the strict
// decoder does not stumble on them.
func policyJSON(u *unstructured.Unstructured) ([]byte, error) {
	meta := map[string]any{"name": u.GetName()}
	if ns := u.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	if l := u.GetLabels(); len(l) > 0 {
		meta["labels"] = l
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		kept := make(map[string]string, len(a))
		for k, v := range a {
			if k != lastApplied {
				kept[k] = v
			}
		}
		if len(kept) > 0 {
			meta["annotations"] = kept
		}
	}
	doc := map[string]any{
		"apiVersion": u.GetAPIVersion(),
		"kind":       u.GetKind(),
		"metadata":   meta,
	}
	if spec, ok := u.Object["spec"]; ok {
		doc["spec"] = spec
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	return b, nil
}

// NewClient returns a dynamic client for a cluster: from the kubeconfig
// file when kubeconfigFile is set (its current context, or kubeContext), or
// from the pod's service account when inCluster is set. Exactly one of
// the two must be given.
func NewClient(kubeconfigFile, kubeContext string, inCluster bool) (dynamic.Interface, error) {
	cfg, err := kubeconfig.Load(kubeconfigFile, kubeContext, inCluster, "verdict")
	if err != nil {
		return nil, err
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return c, nil
}
