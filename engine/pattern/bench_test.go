package pattern

import (
	"encoding/json"
	"testing"
)

// benchPattern is a typical pod pattern: a required label, resource limits
// with quantity operators, wildcards, operators and equality anchors.
const benchPattern = `{
	"metadata": {"labels": {"app.kubernetes.io/name": "?*"}},
	"spec": {
		"=(securityContext)": {"=(runAsNonRoot)": true},
		"=(hostNetwork)": false,
		"containers": [{
			"name": "*",
			"image": "!*:latest",
			"=(imagePullPolicy)": "Always | IfNotPresent",
			"resources": {
				"limits": {"memory": "<=2Gi", "cpu": "?*"},
				"requests": {"memory": "?*", "cpu": "100m-2"}
			},
			"=(securityContext)": {"=(privileged)": false, "=(allowPrivilegeEscalation)": false}
		}]
	}
}`

// benchConditional skips unless a container runs nginx.
const benchConditional = `{"spec": {"containers": [{"(image)": "nginx:*", "imagePullPolicy": "Always"}]}}`

const benchPod = `{
	"apiVersion": "v1", "kind": "Pod",
	"metadata": {"name": "web", "namespace": "default",
		"labels": {"app.kubernetes.io/name": "web", "team": "a"},
		"annotations": {"note": "x"}},
	"spec": {
		"securityContext": {"runAsNonRoot": true},
		"containers": [
			{"name": "app", "image": "registry.example.com/app:1.2.3", "imagePullPolicy": "IfNotPresent",
				"ports": [{"containerPort": 8080}],
				"resources": {"limits": {"memory": "512Mi", "cpu": "1"}, "requests": {"memory": "256Mi", "cpu": "250m"}},
				"securityContext": {"privileged": false, "allowPrivilegeEscalation": false}},
			{"name": "sidecar", "image": "registry.example.com/proxy:2.0", "imagePullPolicy": "Always",
				"resources": {"limits": {"memory": "128Mi", "cpu": "500m"}, "requests": {"memory": "64Mi", "cpu": "100m"}}}
		],
		"volumes": [{"name": "data", "emptyDir": {}}]
	}
}`

func benchDecode(b *testing.B, s string) any {
	b.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		b.Fatal(err)
	}
	return v
}

func BenchmarkValidate(b *testing.B) {
	pod := benchDecode(b, benchPod)
	for _, bc := range []struct {
		name    string
		pattern string
		want    Status
	}{
		{"pod", benchPattern, Pass},
		{"conditional-skip", benchConditional, Skip},
	} {
		p, err := Compile(benchDecode(b, bc.pattern))
		if err != nil {
			b.Fatal(err)
		}
		if got := p.Validate(pod).Status; got != bc.want {
			b.Fatalf("Validate(%s) = %v, want %v", bc.name, got, bc.want)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Validate(pod)
			}
		})
	}
	raw := benchDecode(b, benchPattern)
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			CompileSubstituted(raw)
		}
	})
}
