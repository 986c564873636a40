package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/verdict-policy/verdict/internal/kubeconfig"
	"github.com/verdict-policy/verdict/internal/kubeevents"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/webhookproxy"
)

// webhookKubeFlags are the cluster flags of `verdict webhook`: namespace
// labels from an informer, and the generate applier.
type webhookKubeFlags struct {
	kubeconfig  string
	kubeContext string
	inCluster   bool
	syncWait    time.Duration
	noGenerate  bool
	applier     webhookproxy.ApplierOptions
	events      eventsFlags
}

func (k *webhookKubeFlags) register(f *pflag.FlagSet) {
	f.StringVar(&k.kubeconfig, "kubeconfig", "", "read namespace labels from, and apply generated resources to, the cluster of this kubeconfig file")
	f.StringVar(&k.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	f.BoolVar(&k.inCluster, "in-cluster", false, "read namespace labels from, and apply generated resources to, the cluster the webhook runs in (its service account)")
	f.DurationVar(&k.syncWait, "namespace-sync-wait", webhookproxy.DefaultNamespaceSyncWait, "how long a review waits for the namespace cache's first sync before it fails by its failure policy")
	f.BoolVar(&k.noGenerate, "disable-generate", false, "with --kubeconfig or --in-cluster, do not apply the resources of generate rules")
	f.IntVar(&k.applier.Workers, "generate-workers", webhookproxy.DefaultGenerateWorkers, "generated resources applied concurrently")
	f.IntVar(&k.applier.QueueSize, "generate-queue", webhookproxy.DefaultGenerateQueue, "generate intents waiting to be applied; more are dropped and counted")
	f.IntVar(&k.applier.Attempts, "generate-attempts", webhookproxy.DefaultGenerateAttempts, "tries per generated resource")
	k.events.register(f)
}

// setup adds the namespace cache and the generate applier to opts when a
// cluster is configured, and starts them until ctx ends.
func (k *webhookKubeFlags) setup(ctx context.Context, opts *webhookproxy.Options) error {
	if k.kubeconfig == "" && !k.inCluster {
		if k.kubeContext != "" {
			return &exitError{code: exitUsage, msg: "--context needs --kubeconfig"}
		}
		return nil
	}
	cfg, err := kubeconfig.Load(k.kubeconfig, k.kubeContext, k.inCluster, "verdict-webhook")
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err := countKubeRequests(cfg, opts.Registry, opts.MetricsMaxSeries); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	nc, err := webhookproxy.NewNamespaceCache(cs, webhookproxy.NamespaceCacheOptions{SyncWait: k.syncWait})
	if err != nil {
		return err
	}
	nc.Start(ctx)
	opts.Namespaces = nc
	go func() {
		select {
		case <-nc.Synced():
			opts.Logger.Info("namespace cache synced")
		case <-ctx.Done():
		}
	}()
	if k.noGenerate {
		return nil
	}
	dyn, dc, err := kubeClients(cfg)
	if err != nil {
		return err
	}
	ao := k.applier
	ao.Logger, ao.Registry = opts.Logger, opts.Registry
	// The generate intents that fail give Kyverno's PolicyError events on
	// their policy, about the trigger.
	em, err := k.events.emitter(cfg, opts.Logger, opts.Registry)
	if err != nil {
		return err
	}
	go em.Run(ctx)
	ao.Failed = func(t webhookproxy.Trigger, in *verdictv1.GenerateIntent, err error) {
		em.Add(kubeevents.BackgroundFailed(err.Error(), t.PolicyKind(in), in.GetPolicyNamespace(), in.GetPolicy(), in.GetRule(),
			kubeevents.GeneratePolicyController, corev1.ObjectReference{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}))
	}
	a, err := webhookproxy.NewApplier(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), ao)
	if err != nil {
		return err
	}
	go a.Run(ctx)
	opts.Generator = a
	return nil
}
