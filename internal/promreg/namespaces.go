package promreg

import "slices"

// Namespaces selects, as Kyverno's metricsConfig.namespaces, the
// namespaces a metric counts: Include, when not empty, lists the only
// namespaces counted; Exclude lists namespaces never counted, and wins
// over Include. Cluster-scoped resources (namespace "") are always
// counted. The zero value counts every namespace.
type Namespaces struct {
	Include, Exclude []string
}

// Counted reports whether namespace is counted.
func (n Namespaces) Counted(namespace string) bool {
	if namespace == "" {
		return true
	}
	if slices.Contains(n.Exclude, namespace) {
		return false
	}
	return len(n.Include) == 0 || slices.Contains(n.Include, namespace)
}
