package vpol

import (
	policieskyvernoio "github.com/kyverno/api/api/policies.kyverno.io"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	"github.com/verdict-policy/verdict/engine/kyverno"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The group, kinds and evaluation modes this package knows.
const (
	Group                          = "policies.kyverno.io"
	KindValidatingPolicy           = policieskyvernoio.ValidatingPolicyKind
	KindNamespacedValidatingPolicy = policieskyvernoio.NamespacedValidatingPolicyKind
	KindPolicyException            = "PolicyException"

	ModeKubernetes = policieskyvernoio.EvaluationModeKubernetes
	ModeJSON       = policieskyvernoio.EvaluationModeJSON
)

// Document is a ValidatingPolicy or NamespacedValidatingPolicy as written
// (any served version: the spec is the same type in v1alpha1, v1beta1 and
// v1, Kyverno's github.com/kyverno/api types).
type Document = Doc[policiesv1.ValidatingPolicySpec]

// ExceptionDocument is a policies.kyverno.io PolicyException as written.
type ExceptionDocument struct {
	APIVersion string
	Kind       string
	Metadata   metav1.ObjectMeta
	Spec       policiesv1.PolicyExceptionSpec
}

// servedVersions are the versions of each kind the CRDs serve (and
// Kyverno's CLI loads): NamespacedValidatingPolicy has no v1alpha1.
var servedVersions = map[string][]string{
	KindValidatingPolicy:           {"v1", "v1beta1", "v1alpha1"},
	KindNamespacedValidatingPolicy: {"v1", "v1beta1"},
	KindPolicyException:            {"v1", "v1beta1", "v1alpha1"},
}

// IsPolicy reports whether apiVersion and kind name a policy kind of
// policies.kyverno.io that this package decodes, in any version (a
// version that is not served is a decoding error).
func IsPolicy(apiVersion, kind string) bool {
	return kyverno.APIGroup(apiVersion) == Group && (kind == KindValidatingPolicy || kind == KindNamespacedValidatingPolicy)
}

// IsException reports whether apiVersion and kind name a
// policies.kyverno.io PolicyException.
func IsException(apiVersion, kind string) bool {
	return kyverno.APIGroup(apiVersion) == Group && kind == KindPolicyException
}
