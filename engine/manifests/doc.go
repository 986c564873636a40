// Package manifests verifies signed Kubernetes YAML manifests the way
// github.com/sigstore/k8s-manifest-sigstore does for Kyverno's
// validate.manifests rules, natively and offline: key-based signatures
// embedded in the resource's annotations.
//
// A signed resource carries two annotations under a key domain (default
// cosign.sigstore.dev): message, the base64 of a gzip of a tar.gz archive
// holding the signed YAML files, and signature (signature_1, signature_2,
// ... for more signers), the base64 of a signature over the tar.gz bytes
// (the message, base64-decoded and gunzipped once), made as cosign
// sign-blob does: ECDSA (ASN.1 or IEEE P1363), RSA PKCS#1 v1.5 or Ed25519,
// over SHA-256.
//
// New prepares a rule's options once (the expressions of the ignored
// fields compiled; a policy compiles it). Verifier.Check finds, among the
// signed YAML documents of the message, the manifest of the resource
// (same kind, then group and name, then namespace; else the closest by
// values) and compares it with the resource
// as the library's mapnode diff does, ignoring the fields of the library's
// and Kyverno's default configurations, the signature annotations and the
// rule's ignoreFields. Checked.Verify then checks the signatures with one
// public key. The library's messages are kept ("YAML manifest not found
// for this resource: message not found", "failed to verify signature:
// signature not found", the diff as JSON), since Kyverno reports them.
//
// What needs the network or a cluster is refused with an *UnsupportedError
// naming it: manifests in an OCI image (resourceBundleRef), certificate or
// bundle annotations (Rekor, Fulcio). Dry-run matching needs a cluster and
// is not done (as in Kyverno when the dry run is disabled).
//
// It imports only the standard library, sigs.k8s.io/yaml and the engine's
// root (engine.Budget, engine.Error).
package manifests
