package gpol

import (
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// The kinds this package knows.
const (
	KindGeneratingPolicy           = "GeneratingPolicy"
	KindNamespacedGeneratingPolicy = "NamespacedGeneratingPolicy"
)

// Document is a GeneratingPolicy or NamespacedGeneratingPolicy as written (any served
// version: the spec is the same type in every version, Kyverno's
// github.com/kyverno/api types).
type Document = vpol.Doc[policiesv1.GeneratingPolicySpec]

// IsPolicy reports whether apiVersion and kind name a GeneratingPolicy or
// NamespacedGeneratingPolicy, in any version (a version that is not served is a
// decoding error).
func IsPolicy(apiVersion, kind string) bool { return family.IsPolicy(apiVersion, kind) }
