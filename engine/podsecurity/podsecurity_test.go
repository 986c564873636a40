package podsecurity

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
)

func TestPodOf(t *testing.T) {
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}
	template := map[string]any{"metadata": map[string]any{"name": "tmpl"}, "spec": spec}
	tests := []struct {
		name     string
		give     map[string]any
		wantName string
	}{
		{name: "pod", give: map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": spec}, wantName: "p"},
		{name: "deployment template", give: map[string]any{"kind": "Deployment", "spec": map[string]any{"template": template}}, wantName: "tmpl"},
		{name: "statefulset read as a deployment", give: map[string]any{"kind": "StatefulSet", "spec": map[string]any{"serviceName": "s", "template": template}}, wantName: "tmpl"},
		{name: "cronjob takes the job template's metadata", give: map[string]any{"kind": "CronJob", "spec": map[string]any{"jobTemplate": map[string]any{"metadata": map[string]any{"name": "job"}, "spec": map[string]any{"template": template}}}}, wantName: "job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := PodOf(tt.give)
			if err != nil {
				t.Fatalf("PodOf() error = %v", err)
			}
			if pod.Name != tt.wantName || len(pod.Spec.Containers) != 1 {
				t.Errorf("PodOf() = name %q, %d containers, want %q, 1", pod.Name, len(pod.Spec.Containers), tt.wantName)
			}
		})
	}
}

func TestPodOfErrors(t *testing.T) {
	if _, err := PodOf(map[string]any{"kind": "Service"}); !errors.Is(err, ErrNotAPod) {
		t.Errorf("PodOf(Service) error = %v, want ErrNotAPod", err)
	}
	bad := map[string]any{"kind": "Pod", "spec": map[string]any{"securityContext": map[string]any{"runAsUser": 1.5}}}
	if _, err := PodOf(bad); err == nil {
		t.Errorf("PodOf(runAsUser 1.5) error = nil, want a decoding error")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     kyverno.PodSecurity
		wantPath string
	}{
		{name: "level", give: kyverno.PodSecurity{Level: "strict"}, wantPath: "ps.level"},
		{name: "version", give: kyverno.PodSecurity{Level: "baseline", Version: "1.24"}, wantPath: "ps.version"},
		{name: "unknown control", give: kyverno.PodSecurity{Level: "baseline", Exclude: []Exclude{{ControlName: "Nope"}}}, wantPath: "ps.exclude[0].controlName"},
		{name: "values without field", give: kyverno.PodSecurity{Level: "baseline", Exclude: []Exclude{{ControlName: "Sysctls", Values: []string{"a"}}}}, wantPath: "ps.exclude[0].restrictedField"},
		{name: "field without values", give: kyverno.PodSecurity{Level: "baseline", Exclude: []Exclude{{ControlName: "Sysctls", RestrictedField: "spec.securityContext.sysctls[*].name"}}}, wantPath: "ps.exclude[0].values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(&tt.give, "ps")
			var es engine.Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("Compile() error = %v, want one engine error", err)
			}
			if es[0].Code != engine.CodeInvalidPolicy || es[0].Path != tt.wantPath {
				t.Errorf("Compile() error = %s at %q, want invalid_policy at %q", es[0].Code, es[0].Path, tt.wantPath)
			}
		})
	}
}

func TestSelectChecks(t *testing.T) {
	count := func(level, version string) int {
		c, err := Compile(&kyverno.PodSecurity{Level: level, Version: version}, "ps")
		if err != nil {
			t.Fatalf("Compile(%s, %s) error = %v", level, version, err)
		}
		return len(c.checks)
	}
	baseline, restricted, privileged := count("baseline", ""), count("restricted", "latest"), count("privileged", "v1.24")
	if baseline >= restricted {
		t.Errorf("checks: baseline %d, restricted %d; want fewer baseline checks", baseline, restricted)
	}
	if privileged != restricted {
		t.Errorf("checks: privileged %d, restricted %d; want the same, as in Kyverno", privileged, restricted)
	}
}

func TestParseField(t *testing.T) {
	type result struct {
		Field     string
		Indexes   []int
		List      string
		Container bool
	}
	tests := []struct {
		give string
		want result
	}{
		{give: "spec.containers[1].securityContext.privileged", want: result{"spec.containers[*].securityContext.privileged", []int{1}, "containers", true}},
		{give: "spec.initContainers[0].ports[2].hostPort", want: result{"spec.initContainers[*].ports[*].hostPort", []int{0, 2}, "initContainers", true}},
		{give: "spec.hostNetwork", want: result{"spec.hostNetwork", []int{}, "hostNetwork", false}},
		{give: "spec", want: result{"spec", []int{}, "", false}},
	}
	for _, tt := range tests {
		f, idx, list, c := parseField(tt.give)
		if diff := cmp.Diff(tt.want, result{f, idx, list, c}); diff != "" {
			t.Errorf("parseField(%q) mismatch (-want +got):\n%s", tt.give, diff)
		}
	}
}

// TestPodOfPod pins that the pod of a Pod is its metadata and spec only.
func TestPodOfPod(t *testing.T) {
	give := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"hostIPC": true, "containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		"status":   map[string]any{"phase": "Running", "podIP": "10.0.0.1"},
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{HostIPC: true, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	got, err := PodOf(give)
	if err != nil {
		t.Fatalf("PodOf() error = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodOf() (-want +got):\n%s", diff)
	}
}
