package helm

import (
	"testing"
)

func TestRenderDefault(t *testing.T) {
	objs, err := Render(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		t.Logf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	}
}
