package testcorpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Corpus returns the path of folder (for example "pod-security") in the
// kyverno/policies corpus next to the repository that holds the working
// directory, and whether it exists.
func Corpus(folder string) (string, bool) {
	root, err := repoRoot()
	if err != nil {
		return "", false
	}
	dir := filepath.Join(root, "..", "shared", "conformance", "kyverno-policies", folder)
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// repoRoot is the nearest folder above the working directory with a
// go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// File is a policy file.
type File struct {
	Path string
	Data []byte
}

// ClusterPolicies returns the .yaml files below dir that hold exactly one
// document, a ClusterPolicy, in lexical order. Folders whose name starts
// with a dot (the corpus's .chainsaw-test and .kyverno-test) are skipped.
func ClusterPolicies(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".yaml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if isClusterPolicy(data) {
			out = append(out, File{Path: path, Data: data})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read policies below %s: %w", dir, err)
	}
	return out, nil
}

// isClusterPolicy reports whether data is one YAML document holding a
// ClusterPolicy.
func isClusterPolicy(data []byte) bool {
	body := strings.TrimPrefix(strings.TrimSpace(string(data)), "---")
	if strings.Contains(body, "\n---") {
		return false
	}
	var doc struct {
		Kind string `json:"kind"`
	}
	return yaml.Unmarshal([]byte(body), &doc) == nil && doc.Kind == "ClusterPolicy"
}
