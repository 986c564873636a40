// Package promreg declares the Prometheus metrics of Verdict's services,
// one line each: a Builder creates each metric and registers it, and
// keeps the first registration error for Err, so that a service's metrics
// are a struct literal and one error check.
//
// It imports only the standard library and the Prometheus client.
package promreg
