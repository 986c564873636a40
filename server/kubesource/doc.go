// Package kubesource is the Kubernetes policy source of the decision
// server: a server.PolicySource that holds the kyverno.io/v1
// ClusterPolicies and Policies, the kyverno.io/v2 PolicyExceptions, and
// the policies.kyverno.io ValidatingPolicies, NamespacedValidatingPolicies,
// MutatingPolicies, NamespacedMutatingPolicies, ImageValidatingPolicies,
// NamespacedImageValidatingPolicies, GeneratingPolicies,
// NamespacedGeneratingPolicies, DeletingPolicies,
// NamespacedDeletingPolicies and PolicyExceptions, and the
// ValidatingAdmissionPolicies and
// ValidatingAdmissionPolicyBindings (admissionregistration.k8s.io/v1) of a
// cluster, read through client-go dynamic informers, so `verdict serve
// --kubeconfig` (or --in-cluster) serves the policies and exceptions
// Kyverno users apply with kubectl, and reports on the
// ValidatingAdmissionPolicies as Kyverno's reports controller does.
//
// Read Source and Options first; NewClient builds the dynamic client from a
// kubeconfig file or the pod's service account. Run lists every resource
// once (failing early when Kyverno's policy CRDs are not installed or RBAC
// refuses; a cluster without a PolicyException CRD or the
// policies.kyverno.io CRDs gets a warning, and the policies.kyverno.io
// kinds are read at v1, or at the newest older version the cluster serves),
// then reports a complete snapshot when the informers are synced and again
// after every change, debounced. Each object becomes one document with the
// fields a user writes (apiVersion, kind, name, namespace, labels,
// annotations, spec); the fields the API server maintains are left out, so
// a status update neither changes a policy's content hash nor makes the
// server compile it again. The server's Store decodes (engine/kyverno,
// engine/vpol, engine/mpol, engine/vap) and compiles the documents and keeps the last good version
// of a policy that stops compiling.
//
// This package imports server (for the PolicySource types), the engine's
// kyverno, vpol, mpol, ivpol, gpol, dpol and vap models (for kind names)
// and client-go. Only cmd/verdict and deploy (whose manifest checks name
// the resources it watches) import it; the server package does not, so it
// builds without client-go.
package kubesource
