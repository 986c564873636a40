package ivpol

import (
	"strings"

	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine/vpol"
)

// The kinds this package knows.
const (
	KindImageValidatingPolicy           = "ImageValidatingPolicy"
	KindNamespacedImageValidatingPolicy = "NamespacedImageValidatingPolicy"
)

// Document is an ImageValidatingPolicy or NamespacedImageValidatingPolicy
// as written (any served version: the spec is the same type in v1alpha1,
// v1beta1 and v1, Kyverno's github.com/kyverno/api types).
type Document struct {
	APIVersion string
	Kind       string
	Metadata   metav1.ObjectMeta
	Spec       policiesv1.ImageValidatingPolicySpec
}

// Namespaced reports whether the document is a
// NamespacedImageValidatingPolicy.
func (d *Document) Namespaced() bool { return d.Kind == KindNamespacedImageValidatingPolicy }

// servedVersions are the versions of each kind the CRDs serve.
var servedVersions = map[string][]string{
	KindImageValidatingPolicy:           {"v1", "v1beta1", "v1alpha1"},
	KindNamespacedImageValidatingPolicy: {"v1", "v1beta1"},
}

// IsPolicy reports whether apiVersion and kind name an
// ImageValidatingPolicy or NamespacedImageValidatingPolicy, in any version
// (a version that is not served is a decoding error).
func IsPolicy(apiVersion, kind string) bool {
	if kind != KindImageValidatingPolicy && kind != KindNamespacedImageValidatingPolicy {
		return false
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	return group == vpol.Group
}
