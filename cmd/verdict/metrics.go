package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
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
