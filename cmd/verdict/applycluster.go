package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/verdict-policy/verdict/engine/match"
	"github.com/verdict-policy/verdict/internal/kubeconfig"
	"github.com/verdict-policy/verdict/scanner"
)

// defaultApplyPageSize is the objects of one list call of apply --cluster
// (kyverno apply's --batch-size default).
const defaultApplyPageSize = 100

// applyClusterFlags are kyverno apply's flags for the resources of a
// cluster.
type applyClusterFlags struct {
	cluster     bool
	kubeconfig  string
	kubeContext string
	namespace   string
	selector    string
	pageSize    int64
	// clusterWide is --cluster-wide-resources (kyvernoflags.go): with
	// namespace, the cluster-scoped resources too.
	clusterWide bool
}

func registerApplyClusterFlags(f *pflag.FlagSet) *applyClusterFlags {
	c := &applyClusterFlags{}
	f.BoolVarP(&c.cluster, "cluster", "c", false, "apply the policies to the resources of the cluster (the kinds they match), instead of --resource")
	f.StringVar(&c.kubeconfig, "kubeconfig", "", "with --cluster, the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&c.kubeContext, "context", "", "with --cluster, the kubeconfig context to use (default: its current context)")
	f.StringVarP(&c.namespace, "namespace", "n", "", "with --cluster, the resources of this namespace only (and no cluster-scoped resource)")
	f.StringVarP(&c.selector, "selector", "l", "", "with --cluster, the resources this label selector selects only (app=web,tier!=db)")
	f.Int64Var(&c.pageSize, "batch-size", defaultApplyPageSize, "with --cluster, the objects of one list call (pages)")
	return c
}

// restConfig is the kubeconfig of --kubeconfig and --context, or the
// default one (as kubectl and kyverno find it).
func (c *applyClusterFlags) restConfig() (*rest.Config, error) {
	if c.kubeconfig != "" {
		return kubeconfig.Load(c.kubeconfig, c.kubeContext, false, "verdict-apply")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{CurrentContext: c.kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = "verdict-apply"
	return cfg, nil
}

// source lists the cluster's resources of the kinds the policies match,
// page by page, through the scanner's cluster source.
func (c *applyClusterFlags) source(log *slog.Logger) (func(ctx context.Context, kinds []match.Kind, fn func(map[string]any) error) error, error) {
	if c.pageSize <= 0 {
		return nil, fmt.Errorf("--batch-size %d: want at least 1", c.pageSize)
	}
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	dyn, disc, err := kubeClients(cfg)
	if err != nil {
		return nil, err
	}
	cluster, err := scanner.NewCluster(scanner.ClusterOptions{Client: dyn, Discovery: memory.NewMemCacheClient(disc), PageSize: c.pageSize, Logger: log})
	if err != nil {
		return nil, err
	}
	sel := scanner.Selection{Namespace: c.namespace, LabelSelector: c.selector, ClusterScoped: c.clusterWide}
	return func(ctx context.Context, kinds []match.Kind, fn func(map[string]any) error) error {
		var sk []scanner.Kind
		for _, k := range kinds {
			if k.Kind == "*" || k.Resource == "*" {
				log.Warn("a policy matches kind *: apply --cluster lists only the kinds named in policies")
				continue
			}
			sk = append(sk, scanner.Kind{Group: k.Group, Version: k.Version, Kind: k.Kind, Resource: k.Resource})
		}
		whole, err := scanner.ParseShard("")
		if err != nil {
			return err
		}
		return cluster.SelectedSource(sk, sel).List(ctx, whole, &applyVisitor{fn: fn, log: log})
	}, nil
}

// applyVisitor hands each listed resource to apply, and logs each kind
// it lists (at info, as kyverno logs its loading at -v 3).
type applyVisitor struct {
	fn  func(map[string]any) error
	log *slog.Logger
}

func (v *applyVisitor) Expect(int) {}
func (v *applyVisitor) Kind(kind string) {
	v.log.Info("listing the resources of the cluster", "kind", kind)
}
func (v *applyVisitor) Visit(r *scanner.Resource) error { return v.fn(r.Object) }
