package scanner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// FileOptions configure NewFileSource.
type FileOptions struct {
	// MaxDocumentBytes limits one YAML or JSON document of a file: a
	// larger one is an error naming the file and the document's line.
	// Default kyverno.DefaultMaxDocumentBytes (32 MiB).
	MaxDocumentBytes int
	// Logger receives a warning per file of a folder skipped because it
	// is not a regular file (a named pipe, a device, a socket). Default:
	// discard.
	Logger *slog.Logger

	// open opens a file to read (a test seam). Default: safefile.Open.
	open func(path string) (io.ReadCloser, error)
}

func (o FileOptions) withDefaults() FileOptions {
	options.Positive(&o.MaxDocumentBytes, kyverno.DefaultMaxDocumentBytes)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	if o.open == nil {
		o.open = func(path string) (io.ReadCloser, error) { return safefile.Open(path) }
	}
	return o
}

// FileSource is a Source of the resources of files: YAML (multi-document,
// "---" separated) and JSON, a `kind: List` standing for its items.
//
// Its files are read one document at a time, and never held: NewFileSource
// reads them once, so that a bad file is reported before a scan starts, and
// keeps only what a listing needs first (the labels of the Namespaces of
// the files, and how many resources of which kinds each namespace has);
// List reads them again and visits each resource as it is decoded. A scan
// of files therefore holds the documents in flight, not the files.
type FileSource struct {
	opts  FileOptions
	paths []string // as given
	files []string
	// labels are the labels of the Namespace objects of the files.
	labels map[string]map[string]string
	// kinds counts the resources of each namespace by kind.
	kinds map[string]map[string]int
	total int
}

// NewFileSource reads paths, each a file or a folder. A folder is read
// recursively: its .yaml, .yml and .json files, in lexical order, hidden
// files and folders skipped, and so are the files that are not regular
// files (a warning to opts.Logger). A resource without a namespace whose
// kind is namespaced is put in "default", as kubectl and verdict apply do.
// Namespace objects of the files give the labels of their namespace
// (namespaceSelector) to the resources in it.
//
// A file that cannot be read or parsed, a path named that is not a regular
// file or a folder (a *safefile.NotRegularError), or a document that is not
// a Kubernetes object (no apiVersion, kind or metadata.name), is an error
// naming the file and the line of the document. It returns ctx's error
// when ctx ends, even while a read blocks.
func NewFileSource(ctx context.Context, paths []string, opts FileOptions) (*FileSource, error) {
	if len(paths) == 0 {
		return nil, errors.New("no file or folder to scan")
	}
	src := &FileSource{opts: opts.withDefaults(), paths: paths, labels: map[string]map[string]string{}, kinds: map[string]map[string]int{}}
	for _, p := range paths {
		fs, err := src.resourceFiles(p)
		if err != nil {
			return nil, err
		}
		src.files = append(src.files, fs...)
	}
	var errs []error
	for _, f := range src.files {
		err := src.readResources(ctx, f, func(r *Resource) error {
			if r.APIVersion == "v1" && r.Kind == "Namespace" {
				src.labels[r.Name] = objectLabels(r.Object)
			}
			byKind := src.kinds[r.Namespace]
			if byKind == nil {
				byKind = map[string]int{}
				src.kinds[r.Namespace] = byKind
			}
			byKind[r.Kind]++
			src.total++
			return nil
		})
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return src, nil
}

// Len is the number of resources of the files.
func (s *FileSource) Len() int { return s.total }

// List visits the resources of shard, in file order, reading the files
// again one document at a time. It returns ctx's error when ctx ends, even
// while a read blocks.
func (s *FileSource) List(ctx context.Context, shard Shard, v Visitor) error {
	expect := 0
	declared := map[string]bool{}
	for ns, byKind := range s.kinds {
		if !shard.Owns(ns) {
			continue
		}
		for k, n := range byKind {
			expect += n
			declared[k] = true
		}
	}
	v.Expect(expect)
	kinds := make([]string, 0, len(declared))
	for k := range declared {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		v.Kind(k)
	}
	for _, f := range s.files {
		err := s.readResources(ctx, f, func(r *Resource) error {
			if !shard.Owns(r.Namespace) {
				return nil
			}
			if !declared[r.Kind] { // the file changed since NewFileSource
				declared[r.Kind] = true
				v.Kind(r.Kind)
			}
			if r.Namespace != "" {
				r.NamespaceLabels = s.labels[r.Namespace]
			}
			b, err := json.Marshal(r.Object)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Source, err)
			}
			r.JSON = b
			return v.Visit(r)
		})
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
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
// folder. A folder entry that is not a regular file is skipped with a
// warning; path itself is an error then.
func (s *FileSource) resourceFiles(path string) ([]string, error) {
	fi, err := safefile.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	out, err := safefile.Files(path, isResourceFile, func(p string, err error) error {
		var nr *safefile.NotRegularError
		if errors.As(err, &nr) {
			s.opts.Logger.Warn("skipped: not a regular file", "path", p, "type", nr.Mode.Type().String())
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readResources calls fn with each resource of one file, in order, as it
// decodes them. After a document that is not a Kubernetes object fn is no
// longer called, but the rest of the file is read, so that the error names
// every bad document: the decoding errors if any, else the objects that
// are not Kubernetes objects. An error of fn ends the read.
func (s *FileSource) readResources(ctx context.Context, path string, fn func(*Resource) error) error {
	f, err := s.opts.open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := kyverno.NewDecoder(path, safefile.NewContextReader(ctx, f), s.opts.MaxDocumentBytes)
	var errs []error
	for dec.Next() {
		for _, o := range dec.Objects() {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := fileResource(path, o.Line, o.Value)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if len(errs) > 0 || dec.Err() != nil {
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	if err := dec.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
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

// Rereading returns a Source that lists fs for the first scan and reads
// its paths again (NewFileSource) for every later one, so that a periodic
// scan sees the changes of the files.
func (fs *FileSource) Rereading() Source { return &rereading{first: fs} }

type rereading struct {
	first *FileSource // nil after the first scan
	paths []string
	opts  FileOptions
}

func (r *rereading) List(ctx context.Context, shard Shard, v Visitor) error {
	fs := r.first
	if fs != nil {
		r.first, r.paths, r.opts = nil, fs.paths, fs.opts
	} else {
		var err error
		if fs, err = NewFileSource(ctx, r.paths, r.opts); err != nil {
			return err
		}
	}
	return fs.List(ctx, shard, v)
}
