package testcorpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClusterPolicies(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml":                  "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: a}\n",
		"b/b.yaml":                "---\nkind: ClusterPolicy\nmetadata: {name: b}\n",
		"c.yaml":                  "apiVersion: kyverno.io/v1\nkind: Policy\nmetadata: {name: c}\n",
		"d.yaml":                  "kind: ClusterPolicy\nmetadata: {name: d}\n---\nkind: ClusterPolicy\nmetadata: {name: e}\n",
		"e.yml":                   "kind: ClusterPolicy\n",
		".kyverno-test/f.yaml":    "kind: ClusterPolicy\n",
		"g/.chainsaw-test/g.yaml": "kind: ClusterPolicy\n",
		"h.yaml":                  "kind: [ClusterPolicy\n",
		"i/resource.yaml":         "apiVersion: v1\nkind: Pod\n",
		"j/kyverno-test.yaml":     "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\n",
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ClusterPolicies(dir)
	if err != nil {
		t.Fatalf("ClusterPolicies() error = %v", err)
	}
	var names []string
	for _, f := range got {
		rel, _ := filepath.Rel(dir, f.Path)
		names = append(names, rel)
		if string(f.Data) != files[rel] {
			t.Errorf("ClusterPolicies() %s data = %q, want %q", rel, f.Data, files[rel])
		}
	}
	if diff := cmp.Diff([]string{"a.yaml", "b/b.yaml"}, names); diff != "" {
		t.Errorf("ClusterPolicies() (-want +got):\n%s", diff)
	}
	if _, err := ClusterPolicies(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("ClusterPolicies(missing folder) error = nil, want an error")
	}
}

func TestCorpus(t *testing.T) {
	dir, ok := Corpus("pod-security")
	if !ok {
		t.Skipf("corpus not present at %s", dir)
	}
	files, err := ClusterPolicies(dir)
	if err != nil || len(files) == 0 {
		t.Errorf("ClusterPolicies(%s) = %d files, %v; want some", dir, len(files), err)
	}
	if _, ok := Corpus("no-such-folder"); ok {
		t.Errorf("Corpus(no-such-folder) exists, want false")
	}
}
