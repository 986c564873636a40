// Command workload writes a multi-document YAML of generated Pods and
// Deployments, for measuring `verdict apply` on a realistic amount of work.
//
//	go run ./hack/workload -n 2000 > /tmp/workload.yaml
//
// Resources vary in labels, images, security contexts, probes and resource
// requests, so that policies both pass and fail on them. The output is
// deterministic for a given -n and -seed.
package main
