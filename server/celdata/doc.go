// Package celdata holds the data sources of Kyverno's CEL libraries that
// the decision server answers without a cluster: HTTP (http.Get,
// http.Post, http.Client) and, in images.go, Images (image.GetMetadata).
// Both implement the interfaces of engine/kyvernocel and are set in
// server.Options.CELData by `verdict serve`, next to the resource source
// of host/kubelookup.
//
// Read first: HTTP and HTTPOptions, Images and ImageOptions.
//
// # HTTP
//
// An http.* call is an outbound request made from inside an admission
// request, on behalf of whoever wrote the policy, so it is refused unless
// the operator allowed its URL (HTTPOptions.Allow, Kyverno's
// --httpAllowlist semantics; empty by default: every call is refused).
// Blocked ranges and names (HTTPOptions.Block, DefaultHTTPBlock: loopback,
// 0.0.0.0, link-local and the metadata services) are checked on the URL's
// host and on the address dialled after DNS resolution, and on every
// redirect (at most 3), so that neither a name that resolves into a blocked
// range nor a redirect escapes them. Each call is bounded by
// HTTPOptions.Timeout (and the evaluation's deadline) and its response by
// MaxResponseBytes. The decision server adds the limits that depend on the
// request (calls per evaluation, no calls from inline or namespaced
// policies unless allowed): see server.Options.
//
// # Images
//
// Images reads an image's registry with Kyverno's image data loader
// (github.com/kyverno/sdk/extensions/imagedataloader), through a transport
// that dials none of the blocked addresses (an image reference, and so the
// registry contacted, is chosen by whoever writes the object) and fails a
// response larger than ImageOptions.MaxResponseBytes; the requests of one
// image are bounded by ImageOptions.Timeout, and the data is kept
// CacheTTL in an LRU of CacheSize images (one read for concurrent calls).
//
// This package imports the engine's kyvernocel API, net/http and
// go-containerregistry; it does not import server, and only cmd/verdict
// imports it.
package celdata
