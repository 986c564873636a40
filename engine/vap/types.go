package vap

import (
	"github.com/verdict-policy/verdict/engine/kyverno"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The group and kinds this package knows.
const (
	Group       = admissionregistrationv1.GroupName
	KindPolicy  = "ValidatingAdmissionPolicy"
	KindBinding = "ValidatingAdmissionPolicyBinding"
)

// servedVersions are the versions Kyverno's CLI loads of each kind
// (cmd/cli/kubectl-kyverno/policy/load.go): v1 only.
var servedVersions = map[string][]string{
	KindPolicy:  {"v1"},
	KindBinding: {"v1"},
}

// Document is a ValidatingAdmissionPolicy as written, with Kubernetes'
// own spec type.
type Document struct {
	APIVersion string
	Kind       string
	Metadata   metav1.ObjectMeta
	Spec       admissionregistrationv1.ValidatingAdmissionPolicySpec
}

// BindingDocument is a ValidatingAdmissionPolicyBinding as written.
type BindingDocument struct {
	APIVersion string
	Kind       string
	Metadata   metav1.ObjectMeta
	Spec       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec
}

// IsPolicy reports whether apiVersion and kind name a
// ValidatingAdmissionPolicy, in any version (a version Kyverno's CLI does
// not load is a decoding error).
func IsPolicy(apiVersion, kind string) bool {
	return kyverno.APIGroup(apiVersion) == Group && kind == KindPolicy
}

// IsBinding reports whether apiVersion and kind name a
// ValidatingAdmissionPolicyBinding, in any version.
func IsBinding(apiVersion, kind string) bool {
	return kyverno.APIGroup(apiVersion) == Group && kind == KindBinding
}
