//go:build e2e

package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// registriesEntry caches the ConfigMaps of namespace gctx-config, each
// naming an allowed registry in data.registry, with the projection
// allowed (the list of registries).
const registriesEntry = `apiVersion: kyverno.io/v2beta1
kind: GlobalContextEntry
metadata:
  name: registries
spec:
  kubernetesResource:
    group: ""
    version: v1
    resource: configmaps
    namespace: gctx-config
  projections:
  - name: allowed
    jmesPath: "[].data.registry"
`

// registriesValidatingPolicy denies Pods labelled check: vpol whose images
// come from a registry the entry does not allow (globalContext.Get).
const registriesValidatingPolicy = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: vpol-registries
spec:
  validationActions: [Deny]
  matchConstraints:
    objectSelector:
      matchLabels: {check: vpol}
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: "object.spec.containers.all(c, globalContext.Get('registries', 'allowed').exists(r, c.image.startsWith(r + '/')))"
    message: the registry is not allowed (ValidatingPolicy)
`

// registriesClusterPolicy denies Pods labelled check: cpol whose first
// image comes from a registry the entry does not allow (globalReference).
const registriesClusterPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: cpol-registries
spec:
  validationFailureAction: Enforce
  background: false
  rules:
  - name: registry
    match:
      any:
      - resources:
          kinds: [Pod]
          selector:
            matchLabels: {check: cpol}
    context:
    - name: allowed
      globalReference:
        name: registries.allowed
    validate:
      message: the registry is not allowed (ClusterPolicy)
      deny:
        conditions:
          any:
          - key: "{{ split(request.object.spec.containers[0].image, '/')[0] }}"
            operator: AnyNotIn
            value: "{{ allowed }}"
`

// TestE2EGlobalContext deploys overlays/dev (with the GlobalContextEntry
// CRD of deploy/crds) and checks, through the API server, the webhook
// proxy and a decision server watching the cluster, that a
// kubernetesResource GlobalContextEntry serves CEL globalContext.Get and
// the globalReference context entry, and follows the objects it caches.
func TestE2EGlobalContext(t *testing.T) {
	d := deployDev(t)
	ctx := t.Context()
	for _, ns := range []string{"gctx-config", "gctx-e2e"} {
		if _, err := d.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns, Labels: map[string]string{"purpose": "production"},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Namespace %s: %v", ns, err)
		}
	}
	// No controller manager creates it: Pods need it.
	if _, err := d.cs.CoreV1().ServiceAccounts("gctx-e2e").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount gctx-e2e/default: %v", err)
	}
	allow := func(name, registry string) {
		t.Helper()
		if _, err := d.cs.CoreV1().ConfigMaps("gctx-config").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"registry": registry},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ConfigMap gctx-config/%s: %v", name, err)
		}
	}
	allow("ghcr", "ghcr.io")
	d.applyPolicies(t, registriesEntry, registriesValidatingPolicy, registriesClusterPolicy)
	waitServed(t, d, "vpol-registries")
	waitServed(t, d, "cpol-registries")

	createPod := func(name, check, image string) error {
		_, err := d.cs.CoreV1().Pods("gctx-e2e").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "gctx-e2e", Labels: map[string]string{"check": check}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	for _, check := range []string{"vpol", "cpol"} {
		// Until the server has listed the entry's objects, the policies
		// report an error: wait for an allowed image to pass.
		poll(t, 30*time.Second, check+" allows ghcr.io", func() error { return createPod("ok-"+check, check, "ghcr.io/team/app:v1") })
		err := createPod("bad-"+check, check, "docker.io/library/nginx:1")
		if err == nil || !strings.Contains(err.Error(), "the registry is not allowed") {
			t.Errorf("create Pod with a docker.io image (%s) = %v, want denied: the registry is not allowed", check, err)
		}
	}
	allow("docker", "docker.io")
	for _, check := range []string{"vpol", "cpol"} {
		poll(t, 30*time.Second, check+" follows the ConfigMap added", func() error {
			return createPod("now-ok-"+check, check, "docker.io/library/nginx:1")
		})
	}
}
