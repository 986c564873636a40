package podsecurity_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/podsecurity"
)

// TestProperties checks the report properties of a failed podSecurity rule
// against what Kyverno 1.19's CLI reports for the same Pods (kyverno apply
// -p: its addPodSecurityProperties and addImages).
func TestProperties(t *testing.T) {
	privileged := &corev1.SecurityContext{Privileged: new(bool)}
	*privileged.Privileged = true
	tests := []struct {
		name string
		give corev1.PodSpec
		want map[string]string // nil: the rule passes
	}{
		{
			name: "pod and container controls; init containers and digests",
			give: corev1.PodSpec{
				HostNetwork:    true,
				InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36", SecurityContext: privileged}},
				Containers: []corev1.Container{
					{Name: "web", Image: "ghcr.io/org/web@sha256:0000000000000000000000000000000000000000000000000000000000000000", SecurityContext: privileged},
					{Name: "side", Image: "nginx", SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}},
				},
			},
			want: map[string]string{
				"standard":     "baseline",
				"version":      "latest",
				"controls":     "capabilities_baseline,hostNamespaces,privileged",
				"controlsJSON": `[{"ID":"capabilities_baseline","Name":"Capabilities","Images":["docker.io/nginx:latest"]},{"ID":"hostNamespaces","Name":"Host Namespaces","Images":null},{"ID":"privileged","Name":"Privileged Containers","Images":["docker.io/busybox:1.36","ghcr.io/org/web@sha256:0000000000000000000000000000000000000000000000000000000000000000"]}]`,
			},
		},
		{
			name: "passes: no properties",
			give: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		},
	}
	c, err := podsecurity.Compile(&kyverno.PodSecurity{Level: "baseline", Version: "latest"}, "spec.rules[0].validate.podSecurity")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.give}
			_, failed := c.Evaluate(pod)
			if diff := cmp.Diff(tt.want, c.Properties(failed, pod)); diff != "" {
				t.Errorf("Properties() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContainerList compares containerList with the regular expression of
// Kyverno it stands for.
func TestContainerList(t *testing.T) {
	re := regexp.MustCompile(`container(?:s)?\s*(.*?)\s*must`)
	for _, give := range []string{
		`container "nginx" must not set securityContext.privileged=true`,
		`containers "a", "b" must not set securityContext.privileged=true`,
		`host namespaces (hostNetwork=true)`,
		`containersmust`, `containermust`, `container must`, `container "a"  	must x`,
		`pod or container "x" must set securityContext.runAsNonRoot=true`,
		`container "a" should; containers "b" must not`,
		`container "mustard" must not`, `no must here: container`, ``,
	} {
		want, wantOK := "", false
		if m := re.FindStringSubmatch(give); m != nil {
			want, wantOK = m[1], true
		}
		if got, ok := podsecurity.ContainerList(give); got != want || ok != wantOK {
			t.Errorf("containerList(%q) = %q, %t, want %q, %t", give, got, ok, want, wantOK)
		}
	}
}
