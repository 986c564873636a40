package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	n := flag.Int("n", 2000, "number of resources")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	write(w, *n, rand.New(rand.NewPCG(*seed, 0)))
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var (
	images   = []string{"nginx", "nginx:1.27", "ghcr.io/acme/api:2.4.1", "busybox:latest", "registry.k8s.io/pause:3.9", "quay.io/prometheus/node-exporter:v1.8.0"}
	teams    = []string{"storefront", "checkout", "search", "platform"}
	capsDrop = []string{"[ALL]", "[NET_RAW]", "[]"}
)

func write(w *bufio.Writer, n int, r *rand.Rand) {
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("team-%d", i%20)
		labels := fmt.Sprintf("app.kubernetes.io/name: app-%d, team: %s", i, teams[r.IntN(len(teams))])
		if r.IntN(5) == 0 {
			labels = fmt.Sprintf("app: app-%d", i)
		}
		spec := podSpec(r, "      ")
		if i%2 == 0 {
			fmt.Fprintf(w, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%d\n  namespace: %s\n  labels: {%s}\nspec:\n%s", i, ns, labels, podSpec(r, "  "))
			continue
		}
		fmt.Fprintf(w, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deploy-%d\n  namespace: %s\n  labels: {%s}\nspec:\n  replicas: %d\n  selector:\n    matchLabels: {app: app-%d}\n  template:\n    metadata:\n      labels: {app: app-%d, %s}\n    spec:\n%s",
			i, ns, labels, 1+r.IntN(3), i, i, labels, spec)
	}
}

func podSpec(r *rand.Rand, in string) string {
	s := ""
	if r.IntN(4) == 0 {
		s += in + "hostNetwork: true\n"
	}
	if r.IntN(3) > 0 {
		s += in + "securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n"
	}
	s += in + "containers:\n"
	for c := 0; c < 1+r.IntN(2); c++ {
		s += fmt.Sprintf("%s- name: c%d\n%s  image: %s\n", in, c, in, images[r.IntN(len(images))])
		if r.IntN(3) > 0 {
			s += fmt.Sprintf("%s  resources:\n%s    requests: {cpu: %dm, memory: %dMi}\n%s    limits: {memory: %dMi}\n", in, in, 50+r.IntN(500), 64+r.IntN(512), in, 128+r.IntN(4096))
		}
		if r.IntN(2) == 0 {
			s += fmt.Sprintf("%s  livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n%s  readinessProbe: {httpGet: {path: /ready, port: 8080}}\n", in, in)
		}
		if r.IntN(3) > 0 {
			s += fmt.Sprintf("%s  securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: %t, privileged: %t, capabilities: {drop: %s}}\n",
				in, r.IntN(2) == 0, r.IntN(8) == 0, capsDrop[r.IntN(len(capsDrop))])
		}
		if r.IntN(6) == 0 {
			s += fmt.Sprintf("%s  ports: [{containerPort: 8080, hostPort: %d}]\n", in, 30000+r.IntN(1000))
		}
	}
	if r.IntN(5) == 0 {
		s += in + "volumes: [{name: data, hostPath: {path: /var/lib/data}}]\n"
	}
	return s
}
