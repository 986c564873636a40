package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

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
}

// registerKubeFlags adds the Kubernetes source flags to fs.
func registerKubeFlags(fs *pflag.FlagSet) *kubeFlags {
	k := &kubeFlags{}
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "also serve the kyverno.io ClusterPolicies and Policies of the cluster of this kubeconfig file, watched")
	fs.StringVar(&k.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	fs.BoolVar(&k.inCluster, "in-cluster", false, "also serve the kyverno.io ClusterPolicies and Policies of the cluster the server runs in (its service account)")
	fs.StringVar(&k.namespace, "policy-namespace", "", "with --kubeconfig or --in-cluster, read namespaced Policies of this namespace only (default: all)")
	fs.StringVar(&k.exceptionNamespace, "exception-namespace", "", "with --kubeconfig or --in-cluster, apply the PolicyExceptions of this namespace only (default: all)")
	fs.BoolVar(&k.noExceptions, "disable-policy-exceptions", false, "with --kubeconfig or --in-cluster, ignore the cluster's PolicyExceptions")
	return k
}

// source returns the Kubernetes policy source the flags ask for, or nil
// when they ask for none.
func (k *kubeFlags) source(log *slog.Logger) (server.PolicySource, error) {
	if k == nil || (k.kubeconfig == "" && !k.inCluster) {
		if k != nil && (k.kubeContext != "" || k.namespace != "" || k.exceptionNamespace != "" || k.noExceptions) {
			return nil, fmt.Errorf("--context, --policy-namespace, --exception-namespace and --disable-policy-exceptions need --kubeconfig or --in-cluster")
		}
		return nil, nil
	}
	dc, err := kubesource.NewClient(k.kubeconfig, k.kubeContext, k.inCluster)
	if err != nil {
		return nil, err
	}
	return kubesource.New(kubesource.Options{
		Client:             dc,
		Namespace:          k.namespace,
		DisableExceptions:  k.noExceptions,
		ExceptionNamespace: k.exceptionNamespace,
		Logger:             log,
	})
}
