package kyverno

import "strings"

// ClusterScoped reports whether the kind of the API group is cluster-scoped,
// for the built-in Kubernetes kinds and Kyverno's own. Unknown kinds
// (custom resources) read as namespaced, as in Kyverno's CLI, which has no
// discovery.
func ClusterScoped(group, kind string) bool {
	return clusterScopedKinds[group+"/"+kind]
}

// ClusterScopedKind reports whether some API group has a cluster-scoped kind
// of that name, for references that give no apiVersion.
func ClusterScopedKind(kind string) bool {
	for k := range clusterScopedKinds {
		if k[strings.LastIndex(k, "/")+1:] == kind {
			return true
		}
	}
	return false
}

var clusterScopedKinds = map[string]bool{
	"/ComponentStatus":  true,
	"/Namespace":        true,
	"/Node":             true,
	"/PersistentVolume": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"apiextensions.k8s.io/CustomResourceDefinition":                 true,
	"apiregistration.k8s.io/APIService":                             true,
	"authentication.k8s.io/SelfSubjectReview":                       true,
	"authentication.k8s.io/TokenReview":                             true,
	"authorization.k8s.io/SelfSubjectAccessReview":                  true,
	"authorization.k8s.io/SelfSubjectRulesReview":                   true,
	"authorization.k8s.io/SubjectAccessReview":                      true,
	"certificates.k8s.io/CertificateSigningRequest":                 true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"kyverno.io/ClusterPolicy":                                      true,
	"networking.k8s.io/IPAddress":                                   true,
	"networking.k8s.io/IngressClass":                                true,
	"networking.k8s.io/ServiceCIDR":                                 true,
	"node.k8s.io/RuntimeClass":                                      true,
	"rbac.authorization.k8s.io/ClusterRole":                         true,
	"rbac.authorization.k8s.io/ClusterRoleBinding":                  true,
	"resource.k8s.io/DeviceClass":                                   true,
	"resource.k8s.io/ResourceSlice":                                 true,
	"scheduling.k8s.io/PriorityClass":                               true,
	"storage.k8s.io/CSIDriver":                                      true,
	"storage.k8s.io/CSINode":                                        true,
	"storage.k8s.io/StorageClass":                                   true,
	"storage.k8s.io/VolumeAttachment":                               true,
	"storage.k8s.io/VolumeAttributesClass":                          true,
	"wgpolicyk8s.io/ClusterPolicyReport":                            true,
}
