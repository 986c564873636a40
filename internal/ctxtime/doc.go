// Package ctxtime waits as long as a context lets it: the retry backoff of
// the publisher and of the report writer's Kubernetes store, the
// cleanup controller's wait for the next expiry, the server's drain
// delay.
//
// Read first: Sleep. It depends on the standard library only.
package ctxtime
