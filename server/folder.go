package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// DefaultPollInterval is how often a FolderSource looks for changes when
// its Interval is zero.
const DefaultPollInterval = 2 * time.Second

// DefaultMaxPolicyFileBytes is the largest policy file a FolderSource
// reads when its MaxFileBytes is zero: far above any real policy file (the
// API server stores objects of at most 1.5 MB), far below what would
// strain the server.
const DefaultMaxPolicyFileBytes = 32 << 20

// FolderSource reads the policy files of a folder and its sub-folders
// (files ending in .yaml, .yml or .json; entries whose name starts with a
// dot are skipped, as Kyverno's CLI does) and reports a new snapshot when
// any of them changes.
//
// It polls: every Interval it reads the files again and compares their
// content hashes with the last read. Polling needs no watch per folder,
// notices every kind of change the same way (an editor that writes a new
// file and renames it, a Kubernetes ConfigMap volume that swaps a symlink,
// a new sub-folder, a network file system without inotify), and costs a few
// milliseconds per interval for a folder of a hundred policies. A change
// takes up to Interval to be seen.
//
// A file that cannot be read or parsed is reported in the snapshot's
// Errors, and the Store keeps serving the policies that file held before.
// Only regular files (and links to them) are read: a named pipe, device or
// socket is never opened, and is reported in Errors as a
// *safefile.NotRegularError (the Store logs it). A file larger than
// MaxFileBytes is not read either: it is reported as a
// *safefile.TooLargeError.
type FolderSource struct {
	// Dir is the folder. Required.
	Dir string
	// Interval between two reads. Default DefaultPollInterval.
	Interval time.Duration
	// MaxFileBytes is the largest file read. Default
	// DefaultMaxPolicyFileBytes.
	MaxFileBytes int64
}

// Name implements PolicySource.
func (f *FolderSource) Name() string { return "folder " + f.Dir }

// Run implements PolicySource. It fails at once when Dir is not a
// readable folder.
func (f *FolderSource) Run(ctx context.Context, update func(Snapshot)) error {
	if fi, err := os.Stat(f.Dir); err != nil {
		return fmt.Errorf("policy folder: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("policy folder %s: not a directory", f.Dir)
	}
	interval := f.Interval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	var last [sha256.Size]byte
	first := true
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		snap, sum := f.read()
		if first || sum != last {
			update(snap)
			last, first = sum, false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// read reads every policy file and returns the snapshot and a hash of
// everything read (file names, contents and errors).
func (f *FolderSource) read() (Snapshot, [sha256.Size]byte) {
	var snap Snapshot
	h := sha256.New()
	files, skipped, err := policyFiles(f.Dir)
	if err != nil {
		snap.Errors = append(snap.Errors, SourceError{Origin: f.Dir, Err: err})
		fmt.Fprintf(h, "error %s\n", err)
	}
	for _, e := range skipped {
		snap.Errors = append(snap.Errors, e)
		fmt.Fprintf(h, "skipped %s\n", e)
	}
	limit := f.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxPolicyFileBytes
	}
	for _, path := range files {
		data, err := safefile.ReadFile(path, limit)
		if err == nil {
			var docs []Document
			docs, err = fileDocuments(path, data)
			snap.Documents = append(snap.Documents, docs...)
		}
		fmt.Fprintf(h, "file %s %d\n", path, len(data))
		h.Write(data)
		if err != nil {
			snap.Errors = append(snap.Errors, SourceError{Origin: path, Err: err})
			fmt.Fprintf(h, "error %s\n", err)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return snap, sum
}

// policyFiles lists the policy files below dir, sorted, following
// symbolic links to files (ConfigMap volumes link every key). An entry
// that is not a regular file (a named pipe, a device, a socket, or a link
// to one), which a read could block on, is skipped and returned as an
// error of its path; a link to nothing is left out, as when a ConfigMap
// volume swaps its links.
func policyFiles(dir string) ([]string, []SourceError, error) {
	var skipped []SourceError
	out, err := safefile.Files(dir, policyFileName, func(path string, err error) error {
		var nr *safefile.NotRegularError
		if errors.As(err, &nr) {
			skipped = append(skipped, SourceError{Origin: path, Err: nr})
		}
		return nil
	})
	return out, skipped, err
}

func policyFileName(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// fileDocuments splits a policy file into documents, as JSON.
func fileDocuments(path string, data []byte) ([]Document, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	objs, err := kyverno.SplitDocuments(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(objs))
	for _, o := range objs {
		b, err := json.Marshal(o.Value)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, o.Line, err)
		}
		out = append(out, Document{Origin: path, Line: o.Line, JSON: b})
	}
	return out, nil
}
