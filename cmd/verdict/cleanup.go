package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/verdict-policy/verdict/cleanup"
)

// cleanupFlags are the flags of `verdict cleanup`.
type cleanupFlags struct {
	kubeconfig, kubeContext string
	inCluster               bool
	namespace               string
	noExceptions            bool
	maxDeletions            int
	pageSize                int64
	resync                  time.Duration
	dryRun                  bool
	once                    bool
	healthListen            string
	logLevel                string
	kube                    kubeRateFlags
}

func newCleanupCmd() *cobra.Command {
	var fl cleanupFlags
	cmd := &cobra.Command{
		Use:   "cleanup (--kubeconfig FILE | --in-cluster)",
		Short: "Run the cluster's DeletingPolicies on their schedules",
		Long: `Run the DeletingPolicies and NamespacedDeletingPolicies (policies.kyverno.io)
of a cluster as Kyverno's cleanup controller does: when a policy's cron
schedule comes, list the resources its matchConstraints name, evaluate its
conditions on each (policies.kyverno.io PolicyExceptions keep resources), and
delete those it selects, with its deletionPropagationPolicy.

It deletes only what its RBAC lets it: grant it list and delete on the kinds
your policies clean up with a ClusterRole labelled
verdict.io/aggregate-to-cleanup: "true" (docs/operations.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCleanup(cmd.Context(), cmd, &fl)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&fl.kubeconfig, "kubeconfig", "", "the cluster of this kubeconfig file")
	fs.StringVar(&fl.kubeContext, "context", "", "with --kubeconfig, the context to use (default: its current context)")
	fs.BoolVar(&fl.inCluster, "in-cluster", false, "the cluster the command runs in (its service account)")
	fs.StringVar(&fl.namespace, "policy-namespace", "", "read the NamespacedDeletingPolicies of this namespace only (default: all)")
	fs.BoolVar(&fl.noExceptions, "disable-policy-exceptions", false, "ignore the cluster's policies.kyverno.io PolicyExceptions")
	fs.IntVar(&fl.maxDeletions, "max-deletions", cleanup.DefaultMaxDeletions, "the most resources one run of one policy deletes; the run stops there with an error")
	fs.Int64Var(&fl.pageSize, "page-size", cleanup.DefaultPageSize, "the page size of the lists")
	fs.DurationVar(&fl.resync, "resync", cleanup.DefaultResync, "how often the policies are read again")
	fs.BoolVar(&fl.dryRun, "dry-run", false, "delete nothing: log what would be deleted")
	fs.BoolVar(&fl.once, "once", false, "run every policy once now, then exit (1 when a run failed)")
	fs.StringVar(&fl.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&fl.healthListen, "health-listen", "", "serve GET /healthz on this address: 200 while the policies were read within three --resync periods, 503 otherwise (default: none)")
	fl.kube.register(fs)
	return cmd
}

func runCleanup(ctx context.Context, cmd *cobra.Command, fl *cleanupFlags) error {
	if (fl.kubeconfig == "") == !fl.inCluster {
		return usageError("give one of --kubeconfig and --in-cluster")
	}
	if fl.maxDeletions <= 0 || fl.pageSize <= 0 || fl.resync <= 0 {
		return usageError("--max-deletions, --page-size and --resync must be positive")
	}
	log, err := textLogger(cmd.ErrOrStderr(), fl.logLevel)
	if err != nil {
		return err
	}
	cfg, err := fl.kube.load(fl.kubeconfig, fl.kubeContext, fl.inCluster, "verdict-cleanup")
	if err != nil {
		return usageError("%v", err)
	}
	dc, disc, err := kubeClients(cfg)
	if err != nil {
		return usageError("%v", err)
	}
	r, err := cleanup.New(cleanup.Options{
		Client: dc, Discovery: disc, Namespace: fl.namespace, DisableExceptions: fl.noExceptions,
		MaxDeletions: fl.maxDeletions, PageSize: fl.pageSize, Resync: fl.resync,
		DryRun: fl.dryRun, Logger: log,
	})
	if err != nil {
		return usageError("%v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	if fl.once {
		policies, excs, err := r.Load(ctx)
		if err != nil {
			return &exitError{code: exitUsage, msg: err.Error()}
		}
		failed := false
		for _, p := range policies {
			s, err := r.Execute(ctx, p, excs)
			log.Info("deleting policy ran", "policy", p.Key, "selected", s.Selected, "deleted", s.Deleted, "error", err)
			if err != nil {
				failed = true
			}
			for _, d := range s.Deletions {
				fmt.Fprintln(cmd.OutOrStdout(), p.Key+": "+d)
			}
		}
		if failed {
			return &exitError{code: 1, msg: "a deleting policy run failed (see the log)"}
		}
		return nil
	}
	if fl.healthListen != "" {
		ln, err := net.Listen("tcp", fl.healthListen)
		if err != nil {
			return usageError("--health-listen: %v", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
			if !r.Healthy() {
				http.Error(w, "deleting policies not read recently", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
	}
	// Run returns once ctx ends, with ctx's error: Ctrl-C or SIGTERM is a
	// clean stop.
	if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
