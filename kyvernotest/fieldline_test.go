package kyvernotest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/verdict-policy/verdict/engine"
)

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	data := `apiVersion: v1
kind: ConfigMap
metadata: {name: other}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: p
  annotations:
    a.b/c: x
spec:
  rules:
  - name: r
    validate:
      message: "{{ bad }}"
      deny:
        conditions:
          any:
          - key: x
`
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{name: "field of the second document", path: "spec.rules[0].validate.message", want: file + ":15: spec.rules[0].validate.message: m"},
		{name: "list item", path: "spec.rules[0].validate.deny.conditions.any[0]", want: file + ":19: spec.rules[0].validate.deny.conditions.any[0]: m"},
		{name: "key with dots", path: "metadata.annotations.a.b/c", want: file + ":10: metadata.annotations.a.b/c: m"},
		{name: "missing field: the document's line", path: "spec.rules[3].name", want: file + ":5: spec.rules[3].name: m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := engine.Errors{engine.Errorf(engine.CodeInvalidVariable, tt.path, "m")}
			err := locate(file, 5, `compile ClusterPolicy "p"`, in, MaxLocateBytes)
			if got, want := err.Error(), `compile ClusterPolicy "p": `+tt.want; got != want {
				t.Errorf("locate(%s) = %q, want %q", tt.path, got, want)
			}
			if es := engine.As(err); len(es) != 1 || es[0].Path != tt.path {
				t.Errorf("locate(%s) = %v, want it to wrap the engine.Error at %s", tt.path, err, tt.path)
			}
		})
	}
	t.Run("file over the limit", func(t *testing.T) {
		in := engine.Errors{engine.Errorf(engine.CodeInvalidVariable, "spec", "m")}
		if err := locate(file, 5, `compile ClusterPolicy "p"`, in, 10); err.Error() != "spec: m" {
			t.Errorf("locate(limit 10) = %q, want the error as it was", err)
		}
	})
}
