//go:build e2e

package scanner_test

import (
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/verdict-policy/verdict/internal/testing/e2e"
)

// startCluster starts a real API server for the test and returns it with
// its typed and dynamic clients and a cached discovery client.
func startCluster(t *testing.T) (*e2e.Cluster, *kubernetes.Clientset, *dynamic.DynamicClient, discovery.CachedDiscoveryInterface) {
	t.Helper()
	cluster := e2e.Start(t, e2e.Options{})
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cluster, cs, dyn, memory.NewMemCacheClient(disc)
}
