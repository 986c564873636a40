package mpol

import (
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// The kinds this package knows.
const (
	KindMutatingPolicy           = "MutatingPolicy"
	KindNamespacedMutatingPolicy = "NamespacedMutatingPolicy"
)

// Document is a MutatingPolicy or NamespacedMutatingPolicy as written (any served
// version: the spec is the same type in every version, Kyverno's
// github.com/kyverno/api types).
type Document = vpol.Doc[policiesv1.MutatingPolicySpec]

// servedVersions are the versions of each kind the CRDs serve (and
// Kyverno's CLI loads): NamespacedMutatingPolicy has no v1alpha1.
var servedVersions = map[string][]string{
	KindMutatingPolicy:           {"v1", "v1beta1", "v1alpha1"},
	KindNamespacedMutatingPolicy: {"v1", "v1beta1"},
}

// IsPolicy reports whether apiVersion and kind name a MutatingPolicy or
// NamespacedMutatingPolicy, in any version (a version that is not served is a
// decoding error).
func IsPolicy(apiVersion, kind string) bool { return family.IsPolicy(apiVersion, kind) }
