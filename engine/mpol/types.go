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
