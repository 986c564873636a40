// Package promreg declares the Prometheus metrics of Verdict's services,
// one line each: a Builder creates each metric and registers it, and
// keeps the first registration error for Err, so that a service's metrics
// are a struct literal and one error check. SeriesCap bounds the series
// whose labels come from requests, and Namespaces is Kyverno's
// metricsConfig.namespaces filter, shared by the server's and the
// webhook's metrics.
//
// It imports only the standard library and the Prometheus client.
package promreg
