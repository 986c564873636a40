// Package kubemetrics counts the requests a Verdict process makes to the
// Kubernetes API server as Kyverno's kyverno_client_queries_total
// (pkg/metrics/client.go): by operation, client type, resource and
// namespace, read from each request's method and path by a wrapper of the
// client configuration's transport.
//
// It imports client-go's rest package, the Prometheus client and
// internal/promreg only.
package kubemetrics
