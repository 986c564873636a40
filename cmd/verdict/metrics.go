package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/verdict-policy/verdict/internal/promreg"
)

// serveMetrics serves h at /metrics on addr, the --metrics-listen of the
// long-running commands, until stop is called. An error of the endpoint
// once it listens is logged.
func serveMetrics(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics endpoint", "error", err)
		}
	}()
	return func() { hs.Close() }, nil
}

// newMetricsRegistry returns the registry of a long-running command: the
// Go runtime and process collectors, and kyverno_info, Kyverno's version
// gauge, with Verdict's version.
func newMetricsRegistry() *prometheus.Registry {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kyverno_info", Help: "1, with the version of Verdict, as Kyverno's kyverno_info.", ConstLabels: promreg.KyvernoScope}, []string{"version"})
	info.WithLabelValues(versionString()).Set(1)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), info)
	return reg
}
