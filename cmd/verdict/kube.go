package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"

	"github.com/verdict-policy/verdict/host/kubelookup"
	"github.com/verdict-policy/verdict/internal/kubeconfig"
	"github.com/verdict-policy/verdict/internal/kubemetrics"
	"github.com/verdict-policy/verdict/server"
	"github.com/verdict-policy/verdict/server/kubesource"
)

// kubeFlags are the Kubernetes policy source flags of `verdict serve`:
// ClusterPolicies, Policies and PolicyExceptions read from a cluster.
type kubeFlags struct {
	kubeconfig  string
	kubeContext string
	inCluster   bool
	namespace   string

	exceptionNamespace string
	noExceptions       bool
	noVAPs             bool

	// The cluster data of context entries, CEL, mutate targets and
	// generate clones (kubelookup).
	noLookup        bool
	lookupCacheTTL  time.Duration
	apiCallTimeout  time.Duration
	apiCallMaxBytes int64

	// The GlobalContextEntries (kubelookup).
	noGlobalContext      bool
	maxGlobalContext     int
	globalContextRefresh time.Duration
}

// registerKubeFlags adds the Kubernetes source flags to fs.
func registerKubeFlags(fs *pflag.FlagSet) *kubeFlags {
	k := &kubeFlags{}
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "also serve the kyverno.io ClusterPolicies and Policies and the policies.kyverno.io (Namespaced)ValidatingPolicies and (Namespaced)MutatingPolicies of the cluster of this kubeconfig file, watched (and its ValidatingAdmissionPolicies, for background reports)")
	fs.StringVar(&k.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	fs.BoolVar(&k.inCluster, "in-cluster", false, "also serve the kyverno.io ClusterPolicies and Policies and the policies.kyverno.io (Namespaced)ValidatingPolicies and (Namespaced)MutatingPolicies of the cluster the server runs in (its service account), and its ValidatingAdmissionPolicies, for background reports")
	fs.StringVar(&k.namespace, "policy-namespace", "", "with --kubeconfig or --in-cluster, read Policies, NamespacedValidatingPolicies and NamespacedMutatingPolicies of this namespace only (default: all)")
	fs.StringVar(&k.exceptionNamespace, "exception-namespace", "", "with --kubeconfig or --in-cluster, apply the PolicyExceptions (kyverno.io and policies.kyverno.io) of this namespace only (default: all)")
	fs.BoolVar(&k.noExceptions, "disable-policy-exceptions", false, "with --kubeconfig or --in-cluster, ignore the cluster's PolicyExceptions (kyverno.io and policies.kyverno.io)")
	fs.BoolVar(&k.noVAPs, "disable-validating-admission-policies", false, "with --kubeconfig or --in-cluster, ignore the cluster's ValidatingAdmissionPolicies and bindings (otherwise background scans report on those labelled reports.kyverno.io/enabled=true, as Kyverno's --validatingAdmissionPolicyReports)")
	fs.BoolVar(&k.noLookup, "disable-cluster-lookup", false, "with --kubeconfig or --in-cluster, do not read cluster data for policies (configMap and apiCall context entries, CEL namespaceObject and params, mutate targets, generate clones fail as without a cluster)")
	fs.DurationVar(&k.lookupCacheTTL, "cluster-cache-ttl", kubelookup.DefaultCacheTTL, "how long a ConfigMap or Namespace read from the cluster is reused (ConfigMaps labelled cache.kyverno.io/enabled are watched instead)")
	fs.DurationVar(&k.apiCallTimeout, "api-call-timeout", kubelookup.DefaultAPICallTimeout, "deadline of each apiCall context entry (urlPath and service)")
	fs.Int64Var(&k.apiCallMaxBytes, "api-call-max-response-bytes", kubelookup.DefaultMaxResponseBytes, "largest apiCall response read; a larger one fails the context entry")
	fs.BoolVar(&k.noGlobalContext, "disable-global-context", false, "with --kubeconfig or --in-cluster, do not watch the cluster's GlobalContextEntries (globalContext.Get and globalReference context entries fail)")
	fs.IntVar(&k.maxGlobalContext, "max-global-context-entries", kubelookup.DefaultMaxGlobalContextEntries, "GlobalContextEntries kept; those past it are errors for the policies that read them")
	fs.DurationVar(&k.globalContextRefresh, "global-context-min-refresh", kubelookup.DefaultGlobalContextMinRefresh, "shortest refreshInterval of an apiCall GlobalContextEntry (a shorter one is raised to it)")
	return k
}

// lookup returns the cluster data of policies for the cluster of the
// flags, or nil when they name no cluster or --disable-cluster-lookup.
func (k *kubeFlags) lookup(log *slog.Logger, queries *kubemetrics.Queries) (*kubelookup.Lookup, error) {
	if k == nil || k.noLookup || (k.kubeconfig == "" && !k.inCluster) {
		return nil, nil
	}
	cfg, err := kubeconfig.Load(k.kubeconfig, k.kubeContext, k.inCluster, "verdict")
	if err != nil {
		return nil, err
	}
	queries.Wrap(cfg)
	return kubelookup.NewForConfig(cfg, kubelookup.Options{
		CacheTTL:         k.lookupCacheTTL,
		APICallTimeout:   k.apiCallTimeout,
		MaxResponseBytes: k.apiCallMaxBytes,
		Logger:           log,

		DisableGlobalContext:    k.noGlobalContext,
		MaxGlobalContextEntries: k.maxGlobalContext,
		GlobalContextMinRefresh: k.globalContextRefresh,
	})
}

// source returns the Kubernetes policy source the flags ask for, or nil
// when they ask for none.
func (k *kubeFlags) source(log *slog.Logger, queries *kubemetrics.Queries) (server.PolicySource, error) {
	if k == nil || (k.kubeconfig == "" && !k.inCluster) {
		if k != nil && (k.kubeContext != "" || k.namespace != "" || k.exceptionNamespace != "" || k.noExceptions || k.noVAPs) {
			return nil, fmt.Errorf("--context, --policy-namespace, --exception-namespace, --disable-policy-exceptions and --disable-validating-admission-policies need --kubeconfig or --in-cluster")
		}
		return nil, nil
	}
	cfg, err := kubeconfig.Load(k.kubeconfig, k.kubeContext, k.inCluster, "verdict")
	if err != nil {
		return nil, err
	}
	queries.Wrap(cfg)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return kubesource.New(kubesource.Options{
		Client:             dc,
		Namespace:          k.namespace,
		DisableExceptions:  k.noExceptions,
		DisableVAPs:        k.noVAPs,
		ExceptionNamespace: k.exceptionNamespace,
		Logger:             log,
	})
}
