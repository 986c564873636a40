// Package kubeconfig is the one place a Verdict process reads its
// Kubernetes client configuration: from a kubeconfig file (its current
// context, or a named one) or from the pod's service account.
//
// It depends on client-go's rest and clientcmd packages only.
package kubeconfig
