package kyvernotest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// This file is how the loader reads files: only regular files (and links
// to them) are read, through safefile; YAML is decoded one document at a
// time (kyverno.Decoder) with a limit on the size of a document, so that
// Apply can evaluate a resource file of any size document by document.
// A folder entry that is not a regular file is skipped with a warning; a
// path named explicitly that is not one is an error.

// fileOptions are the loader's file settings.
type fileOptions struct {
	// maxDocument limits one YAML document, and a file read whole (test,
	// values, user info and exceptions files). Default
	// kyverno.DefaultMaxDocumentBytes.
	maxDocument int
	// warnings receives a line per folder entry skipped. Default: none.
	warnings io.Writer
	// open opens a file to decode. Default: safefile.Open (a test seam).
	open func(path string) (io.ReadCloser, error)
	// stdin is the file named StdinPath. Default: none.
	stdin io.Reader
}

// StdinPath is the resource path that names standard input, as in
// kyverno apply --resource -.
const StdinPath = "-"

func (o fileOptions) withDefaults() fileOptions {
	if o.maxDocument <= 0 {
		o.maxDocument = kyverno.DefaultMaxDocumentBytes
	}
	if o.warnings == nil {
		o.warnings = io.Discard
	}
	if o.open == nil {
		o.open = func(path string) (io.ReadCloser, error) { return safefile.Open(path) }
	}
	if open, stdin := o.open, o.stdin; stdin != nil {
		var used atomic.Bool
		o.open = func(path string) (io.ReadCloser, error) {
			if path != StdinPath {
				return open(path)
			}
			if used.Swap(true) {
				return nil, errStdinTwice
			}
			return io.NopCloser(stdin), nil
		}
	}
	return o
}

// skipped reports a folder entry that is not a regular file.
func (l *loader) skipped(err error) {
	l.warnMu.Lock()
	defer l.warnMu.Unlock()
	fmt.Fprintf(l.files.warnings, "warning: skipped %v\n", err)
}

// regularEntry reports whether the folder entry path is a regular file to
// read (a link to one included). An entry of another type (a link to a
// folder too) is reported and skipped.
func (l *loader) regularEntry(path string) (bool, error) {
	fi, err := safefile.Stat(path)
	var nr *safefile.NotRegularError
	switch {
	case errors.As(err, &nr):
		l.skipped(err)
		return false, nil
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		l.skipped(&safefile.NotRegularError{Path: path, Mode: fi.Mode()})
		return false, nil
	}
	return true, nil
}

// readFile reads a whole file of at most the document limit.
func (l *loader) readFile(path string) ([]byte, error) {
	return safefile.ReadFile(path, int64(l.files.maxDocument))
}

// decodeFile calls fn with the objects of each document of a file, in
// order, as it reads them. After a document that cannot be decoded fn is
// no longer called, but the rest of the file is read, and the error names
// every bad document, as kyverno.SplitDocuments does.
func (l *loader) decodeFile(ctx context.Context, path string, fn func([]kyverno.Object) error) error {
	return l.decodeFileSkip(ctx, path, nil, fn)
}

// decodeFileSkip is decodeFile without decoding the documents skip skips
// (kyverno.Decoder.Skip; nil skips none).
func (l *loader) decodeFileSkip(ctx context.Context, path string, skip func(string) bool, fn func([]kyverno.Object) error) error {
	f, err := l.files.open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := kyverno.NewDecoder(path, safefile.NewContextReader(ctx, f), l.files.maxDocument)
	dec.Skip = skip
	for dec.Next() {
		if dec.Err() != nil {
			continue
		}
		if err := fn(dec.Objects()); err != nil {
			return err
		}
	}
	return dec.Err()
}

// readObjects reads every object of a file.
func (l *loader) readObjects(path string) ([]kyverno.Object, error) {
	var out []kyverno.Object
	err := l.decodeFile(context.Background(), path, func(objs []kyverno.Object) error {
		out = append(out, objs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var (
	errNoStdin    = errors.New(`path "-" (standard input) given, but no standard input to read`)
	errStdinTwice = errors.New(`path "-" (standard input) named more than once: it can be read only once`)
	// ErrStdinBoth is Apply's error when both the policy and the
	// resource paths name standard input, in kyverno apply's words.
	ErrStdinBoth = errors.New("a stdin pipe can be used for either policies or resources, not both")
)

// resourceFiles lists the files of resource paths: a file as is, the YAML
// files of a folder (not recursively, as Kyverno does).
func (l *loader) resourceFiles(paths []string) ([]string, error) {
	var files []string
	stdin := false
	for _, p := range paths {
		if p == StdinPath {
			switch {
			case l.files.stdin == nil:
				return nil, errNoStdin
			case stdin:
				return nil, errStdinTwice
			}
			stdin = true
			files = append(files, p)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				return nil, &safefile.NotRegularError{Path: p, Mode: fi.Mode()}
			}
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			path := filepath.Join(p, e.Name())
			if e.IsDir() || !isYAML(e.Name()) {
				continue
			}
			ok, err := l.regularEntry(path)
			if err != nil {
				return nil, err
			}
			if ok {
				files = append(files, path)
			}
		}
	}
	return files, nil
}

// eachResource calls fn with each resource of the resource paths, in
// order, reading one document at a time: the resources are not kept.
func (l *loader) eachResource(ctx context.Context, paths []string, fn func(*Resource) error) error {
	files, err := l.resourceFiles(paths)
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	return l.eachResourceOf(ctx, files, nil, fn)
}

// eachResourceOf is eachResource over the files resourceFiles listed,
// without the documents skip skips (nil skips none).
func (l *loader) eachResourceOf(ctx context.Context, files []string, skip func(string) bool, fn func(*Resource) error) error {
	for _, path := range files {
		var fnErr error
		err := l.decodeFileSkip(ctx, path, skip, func(objs []kyverno.Object) error {
			for _, o := range objs {
				if o.Value == nil {
					continue
				}
				if fnErr = ctx.Err(); fnErr != nil {
					return fnErr
				}
				if fnErr = fn(newResource(path, o.Line, o.Value)); fnErr != nil {
					return fnErr
				}
			}
			return nil
		})
		switch {
		case fnErr != nil:
			return fnErr
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("load resources: %w", err)
		}
	}
	return nil
}
