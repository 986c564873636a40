// Package kubelookup is the cluster data of the decision server: an
// eval.Lookup over client-go, set as server.Options.Lookup by `verdict
// serve --kubeconfig` (or --in-cluster), so configMap and apiCall context
// entries, CEL's namespaceObject and params, mutate-existing targets and
// generate clone / cloneList sources read the cluster, as in Kyverno.
//
// Read Lookup and Options first; NewForConfig builds the clients from a
// rest.Config, Start runs the ConfigMap informer. What is read and how:
//
//   - ConfigMap: the ConfigMaps labelled cache.kyverno.io/enabled from an
//     informer (Kyverno's cache); any other with a GET, its result (or
//     its absence) kept CacheTTL in an LRU of CacheSize.
//   - APICall: urlPath through the REST client with the server's
//     identity; service.url through an HTTP client trusting caBundle.
//     Both bounded by APICallTimeout and MaxResponseBytes.
//   - Namespace (cached like ConfigMaps), Resource, Resources and Params:
//     the dynamic client, with kinds mapped through cached discovery
//     refreshed on a miss (at most once per DiscoveryInterval).
//   - GlobalContext (globalcontext.go): the kyverno.io GlobalContextEntries,
//     watched by Start (unless DisableGlobalContext): a kubernetesResource
//     entry from an informer of at most MaxListObjects objects, an apiCall
//     entry refreshed every refreshInterval (at least
//     GlobalContextMinRefresh) with its retries, projections by the
//     engine's JMESPath; at most MaxGlobalContextEntries entries. They
//     serve the globalReference context entry and CEL globalContext.Get.
//   - ImageData is not read: an error wrapping engine.ErrNotFound that
//     says so.
//   - CELSources (cel.go, server.Options.CELData): resource.Get and
//     resource.List of ValidatingPolicies through the dynamic client by
//     group, version and resource (lists bounded by MaxListObjects);
//     resource.Post is refused (the server never writes to a cluster);
//     globalContext.Get reads the GlobalContextEntries above. http and
//     image.GetMetadata are answered by server/celdata, which needs no
//     cluster.
//
// Data that does not exist is an error wrapping engine.ErrNotFound, for
// the engine's lookups and the CEL sources alike. This package imports the
// engine's eval, jmespath and kyvernocel APIs and client-go; it does not import
// server, and only cmd/verdict imports it.
package kubelookup
