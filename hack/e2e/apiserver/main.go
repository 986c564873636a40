// Command apiserver is kube-apiserver v1.34 built from the Go module proxy,
// for the end-to-end tests (make e2e-bins). It is a separate module so that
// Verdict's own module never depends on k8s.io/kubernetes.
package main

import (
	"os"
	_ "time/tzdata" // time zones for CronJob, as upstream's main

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
