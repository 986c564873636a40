package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Load returns the client configuration of the kubeconfig file when
// kubeconfig is set (its current context, or context), or of the pod's
// service account when inCluster is set; exactly one of the two must be
// given. userAgent names the process to the API server.
func Load(kubeconfig, context string, inCluster bool, userAgent string) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	switch {
	case kubeconfig != "" && inCluster:
		return nil, errors.New("--kubeconfig and --in-cluster are exclusive")
	case inCluster:
		cfg, err = rest.InClusterConfig()
	case kubeconfig != "":
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: context},
		).ClientConfig()
	default:
		return nil, errors.New("neither --kubeconfig nor --in-cluster")
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}
