package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/webhookproxy"
)

func newWebhookCmd() *cobra.Command {
	var (
		fl            connFlags // --server and the client's TLS / token flags
		listen        string
		metricsListen string
		tlsCert       string
		tlsKey        string
		selfSigned    bool
		hosts         []string
		caOut         string
		failOpen      bool
		timeout       time.Duration
		maxBody       int64
		kube          webhookKubeFlags
		maxSeries     int
		metricsNs     webhookproxy.MetricsNamespaces
	)
	cmd := &cobra.Command{
		Use:   "webhook --server HOST:PORT --listen :9443 (--tls-cert FILE --tls-key FILE | --self-signed)",
		Short: "Run the admission webhook proxy (AdmissionReview to the decision server)",
		Long: `Serve /validate and /mutate for a ValidatingWebhookConfiguration and a
MutatingWebhookConfiguration over HTTPS, asking the decision server of
--server for each AdmissionReview. The certificate of --tls-cert/--tls-key is
read again when the files change; --self-signed generates one for local use
and writes its CA bundle (the caBundle of the webhook configurations) to
--ca-bundle-out, or prints it.

/validate and /mutate evaluate every policy and fail closed (or open with
--fail-open) when no decision can be made; /validate/fail, /validate/ignore,
/mutate/fail and /mutate/ignore evaluate only the policies of that
failurePolicy and fail as it says, as Kyverno's webhooks do.

With --kubeconfig or --in-cluster, the labels of the request's namespace
(for namespaceSelector) come from a watch of the cluster's Namespaces, and
the generate rules' resources are written with server-side apply (field
manager verdict) after the request is admitted. Without them, namespaces
have no labels and generate intents are not applied.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			copts, err := fl.clientOptions()
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			var cfg *tls.Config
			switch {
			case selfSigned && (tlsCert != "" || tlsKey != ""):
				return &exitError{code: exitUsage, msg: "--self-signed and --tls-cert/--tls-key exclude each other"}
			case selfSigned:
				var ca []byte
				if cfg, ca, err = webhookproxy.SelfSigned(hosts, 365*24*time.Hour); err != nil {
					return err
				}
				if caOut != "" {
					if err := os.WriteFile(caOut, ca, 0o644); err != nil {
						return &exitError{code: exitUsage, msg: fmt.Sprintf("--ca-bundle-out: %v", err)}
					}
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "CA bundle of the self-signed certificate:\n%s", ca)
				}
			case tlsCert != "" || tlsKey != "":
				r, err := webhookproxy.NewCertReloader(tlsCert, tlsKey)
				if err != nil {
					return &exitError{code: exitUsage, msg: err.Error()}
				}
				cfg = r.TLSConfig()
			default:
				return &exitError{code: exitUsage, msg: "the webhook serves HTTPS only: give --tls-cert and --tls-key, or --self-signed"}
			}
			c, err := client.Dial(fl.server, copts)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			defer c.Close()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			reg := newMetricsRegistry()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
			defer stop()
			hopts := webhookproxy.Options{Timeout: timeout, FailOpen: failOpen, MaxBodyBytes: maxBody, Logger: log, Registry: reg,
				MetricsMaxSeries: maxSeries, MetricsNamespaces: metricsNs}
			if err := kube.setup(ctx, &hopts); err != nil {
				return err
			}
			h, err := webhookproxy.New(c, hopts)
			if err != nil {
				return err
			}
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("--listen: %v", err)}
			}
			if metricsListen != "" {
				stopMetrics, err := serveMetrics(metricsListen, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), log)
				if err != nil {
					lis.Close()
					return &exitError{code: exitUsage, msg: fmt.Sprintf("--metrics-listen: %v", err)}
				}
				defer stopMetrics()
			}
			log.Info("webhook proxy listening", "addr", lis.Addr().String(), "server", fl.server)
			return webhookproxy.Serve(ctx, lis, cfg, h, log)
		},
	}
	f := cmd.Flags()
	fl.register(f, decisionServerHelp)
	f.StringVar(&listen, "listen", ":9443", "HTTPS listen address, HOST:PORT")
	f.StringVar(&metricsListen, "metrics-listen", ":9091", "Prometheus /metrics listen address, HOST:PORT (empty: no metrics endpoint)")
	f.StringVar(&tlsCert, "tls-cert", "", "serving certificate (PEM), read again when it changes; needs --tls-key")
	f.StringVar(&tlsKey, "tls-key", "", "key of --tls-cert (PEM)")
	f.BoolVar(&selfSigned, "self-signed", false, "generate a self-signed certificate (local use)")
	f.StringSliceVar(&hosts, "self-signed-hosts", []string{"localhost", "127.0.0.1"}, "names and IP addresses of the self-signed certificate")
	f.StringVar(&caOut, "ca-bundle-out", "", "write the CA bundle of --self-signed to this file instead of printing it")
	f.BoolVar(&failOpen, "fail-open", false, "allow requests (with a warning) when no decision can be made; default: deny")
	f.IntVar(&maxSeries, "metrics-max-series", webhookproxy.DefaultMetricsMaxSeries, "pairs of resource_kind and resource_namespace in kyverno_admission_requests_total and kyverno_admission_review_duration_seconds; past it, reviews are counted under \"_overflow\"")
	f.StringSliceVar(&metricsNs.Include, "metrics-namespaces-include", nil, "count admission reviews in Kyverno's metrics only for these namespaces (as Kyverno's metricsConfig; default: all)")
	f.StringSliceVar(&metricsNs.Exclude, "metrics-namespaces-exclude", nil, "never count admission reviews in Kyverno's metrics for these namespaces (wins over --metrics-namespaces-include)")
	f.DurationVar(&timeout, "timeout", webhookproxy.DefaultTimeout, "deadline of one decision (shorter than the webhook's timeoutSeconds)")
	f.Int64Var(&maxBody, "max-body-bytes", webhookproxy.DefaultMaxBodyBytes, "largest AdmissionReview accepted")
	kube.register(f)
	return cmd
}
