package scanner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/safefile"
	"github.com/verdict-policy/verdict/scanner"
)

// listVisitor keeps what a Source lists.
type listVisitor struct {
	mu       sync.Mutex
	expected int
	names    []string
	visit    func(r *scanner.Resource) error
}

func (v *listVisitor) Expect(n int) { v.expected += n }
func (v *listVisitor) Kind(string)  {}
func (v *listVisitor) Visit(r *scanner.Resource) error {
	v.mu.Lock()
	v.names = append(v.names, r.Name)
	v.mu.Unlock()
	if v.visit != nil {
		return v.visit(r)
	}
	return nil
}

// inTime runs fn and fails the test when it does not return in time.
func inTime(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s still running after 20s", what)
		return nil
	}
}

func TestFileSourceSkipsNotRegularFiles(t *testing.T) {
	dir := writeFiles(t, sampleFiles)
	fifo := filepath.Join(dir, "sub", "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	opts := scanner.FileOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	var src *scanner.FileSource
	err := inTime(t, "NewFileSource", func() (err error) {
		src, err = scanner.NewFileSource(t.Context(), []string{dir}, opts)
		return err
	})
	if err != nil {
		t.Fatalf("NewFileSource(%s) error = %v", dir, err)
	}
	v := &listVisitor{}
	if err := inTime(t, "List", func() error { return src.List(t.Context(), scanner.Shard{Index: 0, Count: 1}, v) }); err != nil {
		t.Fatalf("List() error = %v", err)
	}
	if src.Len() != 7 || len(v.names) != 7 || v.expected != 7 {
		t.Errorf("FileSource(%s): Len %d, listed %d, expected %d; want 7 each", dir, src.Len(), len(v.names), v.expected)
	}
	for _, p := range []string{fifo, link} {
		if !strings.Contains(logs.String(), "path="+p) {
			t.Errorf("NewFileSource(%s) log = %q, want a warning naming %s", dir, logs.String(), p)
		}
	}
}

func TestNewFileSourceNamedNotRegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := inTime(t, "NewFileSource", func() error {
		_, err := scanner.NewFileSource(t.Context(), []string{fifo}, scanner.FileOptions{})
		return err
	})
	var nr *safefile.NotRegularError
	if !errors.As(err, &nr) || nr.Path != fifo {
		t.Errorf("NewFileSource(%s) error = %v, want a *safefile.NotRegularError naming it", fifo, err)
	}
}

// podDocs are n small Pods, and where each document ends.
func podDocs(n int) (string, []int) {
	var b strings.Builder
	ends := make([]int, n)
	for i := range n {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  namespace: ns\nspec:\n  containers:\n  - {name: c, image: nginx}\n---\n", i)
		ends[i] = b.Len()
	}
	return b.String(), ends
}

// seamFiles makes a placeholder file, and FileOptions that open it with
// next (called at each open).
func seamFiles(t *testing.T, next func() io.ReadCloser) (string, scanner.FileOptions) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, scanner.WithOpen(scanner.FileOptions{}, func(p string) (io.ReadCloser, error) {
		if p != path {
			return safefile.Open(p)
		}
		return next(), nil
	})
}

// countingReader counts what was read of r.
type countingReader struct {
	r  io.Reader
	mu sync.Mutex
	n  int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	c.n += n
	c.mu.Unlock()
	return n, err
}

func (c *countingReader) Close() error { return nil }

func (c *countingReader) read() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func TestFileSourceStreams(t *testing.T) {
	// List visits each resource before it reads more than the decoder's
	// buffer past it: a scan of files holds a document at a time.
	const n = 3000
	body, ends := podDocs(n)
	var cur *countingReader
	path, opts := seamFiles(t, func() io.ReadCloser {
		cur = &countingReader{r: strings.NewReader(body)}
		return cur
	})
	src, err := scanner.NewFileSource(t.Context(), []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var at []int
	v := &listVisitor{visit: func(*scanner.Resource) error { at = append(at, cur.read()); return nil }}
	if err := src.List(t.Context(), scanner.Shard{Index: 0, Count: 1}, v); err != nil {
		t.Fatalf("List() error = %v", err)
	}
	if len(at) != n || v.expected != n {
		t.Fatalf("List() visited %d resources, expected %d; want %d", len(at), v.expected, n)
	}
	for i, got := range at {
		if limit := ends[i] + 64<<10 + ends[0]; got > limit {
			t.Fatalf("resource %d visited after %d bytes were read, want at most %d", i, got, limit)
		}
	}
}

// stalledReader gives data, then blocks until it is closed.
func stalledReader(data string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() { io.WriteString(pw, data) }() // never closed: the next read blocks
	return pr
}

func TestFileSourceStopsWhenCancelled(t *testing.T) {
	body, ends := podDocs(3)
	t.Run("NewFileSource", func(t *testing.T) {
		path, opts := seamFiles(t, func() io.ReadCloser { return stalledReader(body[:ends[1]]) })
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		err := inTime(t, "NewFileSource", func() error {
			_, err := scanner.NewFileSource(ctx, []string{path}, opts)
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("NewFileSource(cancelled) = %v, want %v", err, context.Canceled)
		}
	})
	t.Run("Scan", func(t *testing.T) {
		ts := startServer(t, teamLabelPolicy)
		opened := 0
		path, opts := seamFiles(t, func() io.ReadCloser {
			opened++
			if opened == 1 {
				return io.NopCloser(strings.NewReader(body))
			}
			return stalledReader(body[:ends[1]]) // the scan's read stalls after two Pods
		})
		src, err := scanner.NewFileSource(t.Context(), []string{path}, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		sink := &cancelSink{cancel: cancel}
		s, err := scanner.New(ts.client, scanner.Options{BatchSize: 1, Linger: time.Millisecond, Sink: sink, SinkBatch: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = inTime(t, "Scan", func() error {
			_, err := s.Scan(ctx, src, nil, scanner.ScanOptions{})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Scan(cancelled while a read blocks) = %v, want %v", err, context.Canceled)
		}
	})
}

// cancelSink cancels the scan once a result came.
type cancelSink struct{ cancel context.CancelFunc }

func (s *cancelSink) Write(context.Context, []scanner.Result) error    { s.cancel(); return nil }
func (s *cancelSink) ScanDone(context.Context, scanner.ScanDone) error { return nil }

func TestFileSourceDocumentLimit(t *testing.T) {
	const limit = 256
	pod := func(name string, size int) string {
		d := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations:\n    pad: ", name)
		return d + strings.Repeat("x", size-len(d)-1) + "\n"
	}
	tests := []struct {
		name     string
		give     string
		wantLine int // 0: no error
	}{
		{name: "at the limit", give: pod("a", limit) + "---\n" + pod("b", 100)},
		{name: "over the limit", give: pod("a", 100) + "---\n" + pod("b", limit+1), wantLine: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"pods.yaml": tt.give})
			src, err := scanner.NewFileSource(t.Context(), []string{dir}, scanner.FileOptions{MaxDocumentBytes: limit})
			if tt.wantLine == 0 {
				if err != nil || src.Len() != 2 {
					t.Errorf("NewFileSource(%s) error = %v, want 2 resources", tt.name, err)
				}
				return
			}
			var de *kyverno.DocumentError
			var tl *kyverno.DocumentTooLargeError
			if !errors.As(err, &de) || !errors.As(err, &tl) {
				t.Fatalf("NewFileSource(%s) error = %v, want a *kyverno.DocumentTooLargeError", tt.name, err)
			}
			if want := filepath.Join(dir, "pods.yaml"); de.Source != want || de.Line != tt.wantLine || tl.Limit != limit {
				t.Errorf("NewFileSource(%s) error at %s:%d limit %d, want %s:%d limit %d", tt.name, de.Source, de.Line, tl.Limit, want, tt.wantLine, limit)
			}
		})
	}
}

// TestFileSourceRereading: the first scan lists what NewFileSource read,
// each later one reads the files again.
func TestFileSourceRereading(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, namespace: ns}\n"})
	fs, err := scanner.NewFileSource(t.Context(), []string{dir}, scanner.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := fs.Rereading()
	tests := []struct {
		name    string
		content string // written before the scan, when set
		want    []string
	}{
		{"first scan", "", []string{"first"}},
		{"after a change", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second, namespace: ns}\n", []string{"second"}},
	}
	for _, tt := range tests {
		if tt.content != "" {
			if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		v := &listVisitor{}
		if err := src.List(t.Context(), scanner.Shard{}, v); err != nil {
			t.Fatalf("List(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, v.names); diff != "" {
			t.Errorf("List(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
