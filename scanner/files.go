package scanner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
)

// FileSource is a Source of the resources of files: YAML (multi-document,
// "---" separated) and JSON, a `kind: List` standing for its items. It is
// read once, by NewFileSource, so that a bad file is reported before a
// scan starts.
type FileSource struct {
	resources []*Resource
}

// NewFileSource reads paths, each a file or a folder. A folder is read
// recursively: its .yaml, .yml and .json files, in lexical order, hidden
// files and folders skipped. A resource without a namespace whose kind is
// namespaced is put in "default", as kubectl and verdict apply do.
// Namespace objects of the files give the labels of their namespace
// (namespaceSelector) to the resources in it.
//
// A file that cannot be read or parsed, or a document that is not a
// Kubernetes object (no apiVersion, kind or metadata.name), is an error
// naming the file and the line of the document.
func NewFileSource(paths []string) (*FileSource, error) {
	if len(paths) == 0 {
		return nil, errors.New("no file or folder to scan")
	}
	var files []string
	for _, p := range paths {
		fs, err := resourceFiles(p)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	src := &FileSource{}
	var errs []error
	for _, f := range files {
		rs, err := readResources(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src.resources = append(src.resources, rs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	labels := map[string]map[string]string{}
	for _, r := range src.resources {
		if r.APIVersion == "v1" && r.Kind == "Namespace" {
			labels[r.Name] = objectLabels(r.Object)
		}
	}
	for _, r := range src.resources {
		if r.Namespace != "" {
			r.NamespaceLabels = labels[r.Namespace]
		}
		b, err := json.Marshal(r.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Source, err)
		}
		r.JSON = b
	}
	return src, nil
}

// Len is the number of resources of the files.
func (s *FileSource) Len() int { return len(s.resources) }

// List visits the resources of shard, in file order.
func (s *FileSource) List(ctx context.Context, shard Shard, v Visitor) error {
	var mine []*Resource
	for _, r := range s.resources {
		if shard.Owns(r.Namespace) {
			mine = append(mine, r)
		}
	}
	v.Expect(len(mine))
	for _, r := range mine {
		v.Kind(r.Kind)
	}
	for _, r := range mine {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := v.Visit(r); err != nil {
			return err
		}
	}
	return nil
}

func isResourceFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// resourceFiles lists the files of path: path itself when it is a file
// (whatever its extension), the resource files below it when it is a
// folder.
func resourceFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && isResourceFile(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// readResources reads the resources of one file.
func readResources(path string) ([]*Resource, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := kyverno.SplitDocuments(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]*Resource, 0, len(objs))
	var errs []error
	for _, o := range objs {
		r, err := fileResource(path, o.Line, o.Value)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func fileResource(path string, line int, obj map[string]any) (*Resource, error) {
	r := resourceOf(obj)
	r.Source = fmt.Sprintf("%s:%d", path, line)
	var missing []string
	if r.APIVersion == "" {
		missing = append(missing, "apiVersion")
	}
	if r.Kind == "" {
		missing = append(missing, "kind")
	}
	if r.Name == "" {
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: not a Kubernetes object: no %s", r.Source, strings.Join(missing, ", "))
	}
	if r.Namespace == "" && !kyverno.ClusterScoped(groupOf(r.APIVersion), r.Kind) {
		r.Namespace = "default"
		meta, _ := obj["metadata"].(map[string]any)
		meta["namespace"] = "default"
	}
	return r, nil
}
