package kyvernotest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name -> content files in a temporary folder and
// returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const registryPolicy = `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: image-user
spec:
  rules:
  - name: not-root
    match:
      any:
      - resources:
          kinds: [Pod]
    context:
    - name: imageData
      imageRegistry:
        reference: "{{ request.object.spec.containers[0].image }}"
    validate:
      message: "not root"
      deny:
        conditions:
          any:
          - key: "{{ imageData.configData.config.User || '' }}"
            operator: Equals
            value: ""
`

const jsonModePolicy = `apiVersion: policies.kyverno.io/v1beta1
kind: ValidatingPolicy
metadata:
  name: limit-replicas
spec:
  evaluation:
    mode: JSON
  validations:
  - expression: "object.replicas <= 3"
`

const pod = `apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
spec:
  containers:
  - name: c
    image: nginx
`

// TestApplyExtrasErrors checks the errors of kyverno apply's options:
// each is the sentinel error the caller can test for.
func TestApplyExtrasErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"registry.yaml": registryPolicy,
		"json.yaml":     jsonModePolicy,
		"pod.yaml":      pod,
		"two.yaml":      "a: 1\n---\nb: 2\n",
		"list.json":     "[1, 2]",
	})
	path := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		give ApplyOptions
		want error
	}{
		{name: "registry access and an imageRegistry entry", give: ApplyOptions{PolicyPaths: []string{path("registry.yaml")}, ResourcePaths: []string{path("pod.yaml")}, RegistryAccess: true}, want: ErrRegistryEntries},
		{name: "payload of two documents", give: ApplyOptions{PolicyPaths: []string{path("json.yaml")}, JSONPaths: []string{path("two.yaml")}}, want: ErrPayloadNotObject},
		{name: "payload not an object", give: ApplyOptions{PolicyPaths: []string{path("json.yaml")}, JSONPaths: []string{path("list.json")}}, want: ErrPayloadNotObject},
		{name: "exceptions within policies from stdin", give: ApplyOptions{PolicyPaths: []string{StdinPath}, ResourcePaths: []string{path("pod.yaml")}, Stdin: strings.NewReader(jsonModePolicy), ExceptionsWithinPolicies: true}, want: ErrStdinExceptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Apply(t.Context(), tt.give)
			if !errors.Is(err, tt.want) {
				t.Errorf("Apply(%s) = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// TestApplyJSONPayloads checks a JSON payload is evaluated by the
// JSON-mode ValidatingPolicies only, as kyverno apply --json evaluates it
// (the ClusterPolicy on Pods is not).
func TestApplyJSONPayloads(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"json.yaml":    jsonModePolicy,
		"pods.yaml":    strings.ReplaceAll(registryPolicy, "imageRegistry:\n        reference: \"{{ request.object.spec.containers[0].image }}\"", "variable:\n        value: x"),
		"bad.json":     `{"replicas": 5}`,
		"good.yaml":    "replicas: 1\n",
		"payload.json": `{"metadata": {"name": "svc"}, "replicas": 4}`,
	})
	path := func(name string) string { return filepath.Join(dir, name) }
	res, err := Apply(t.Context(), ApplyOptions{
		PolicyPaths: []string{path("json.yaml"), path("pods.yaml")},
		JSONPaths:   []string{path("bad.json"), path("good.yaml"), path("payload.json")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Pass: 1, Fail: 2}); res.Counts != want {
		t.Errorf("Apply(--json).Counts = %+v, want %+v", res.Counts, want)
	}
	var names []string
	for _, r := range res.Responses {
		if !r.Resource.Payload || r.Policy.Name != "limit-replicas" {
			t.Errorf("Apply(--json) response of policy %s on %s (payload %v), want limit-replicas on payloads only", r.Policy.Name, r.Resource.Path, r.Resource.Payload)
		}
		names = append(names, r.Resource.Name)
	}
	if got, want := strings.Join(names, ","), ",,svc"; got != want {
		t.Errorf("Apply(--json) resource names = %q, want %q", got, want)
	}
}
