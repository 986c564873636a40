package kyvernotest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	"github.com/verdict-policy/verdict/internal/spool"
)

// copyFile copies a testdata file into dir.
func copyFile(t *testing.T, from, dir string) string {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, filepath.Base(from))
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// mkfifo makes a named pipe, which nothing ever writes to.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// within runs fn and fails the test when it does not return in time (a
// reader blocked on a named pipe).
func within[T any](t *testing.T, what string, fn func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s still running after 20s: blocked on a named pipe?", what)
		panic("unreachable")
	}
}

const (
	validatePolicy    = "testdata/validate/require-team-label.yaml"
	validateResources = "testdata/validate/.kyverno-test/resources.yaml"
)

func TestApplySkipsNotRegularFiles(t *testing.T) {
	tests := []struct {
		name string
		give func(t *testing.T, dir string) (ApplyOptions, string) // the options and the FIFO
	}{
		{
			name: "named pipe in a resource folder",
			give: func(t *testing.T, dir string) (ApplyOptions, string) {
				copyFile(t, validateResources, filepath.Join(dir, "res"))
				fifo := mkfifo(t, filepath.Join(dir, "res", "zz-fifo.yaml"))
				return ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{filepath.Join(dir, "res")}}, fifo
			},
		},
		{
			name: "named pipe in a policy folder",
			give: func(t *testing.T, dir string) (ApplyOptions, string) {
				copyFile(t, validatePolicy, filepath.Join(dir, "pol"))
				fifo := mkfifo(t, filepath.Join(dir, "pol", "sub", "fifo.yaml"))
				return ApplyOptions{PolicyPaths: []string{filepath.Join(dir, "pol")}, ResourcePaths: []string{validateResources}}, fifo
			},
		},
		{
			name: "link to a named pipe in a resource folder",
			give: func(t *testing.T, dir string) (ApplyOptions, string) {
				copyFile(t, validateResources, filepath.Join(dir, "res"))
				fifo := mkfifo(t, filepath.Join(dir, "fifo"))
				link := filepath.Join(dir, "res", "link.yaml")
				if err := os.Symlink(fifo, link); err != nil {
					t.Fatal(err)
				}
				return ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{filepath.Join(dir, "res")}}, link
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, fifo := tt.give(t, t.TempDir())
			var warnings bytes.Buffer
			opts.Warnings = &warnings
			res, err := within(t, "Apply", func() (*ApplyResult, error) { return Apply(t.Context(), opts) })
			if err != nil {
				t.Fatalf("Apply(%+v) error = %v", opts, err)
			}
			if want := (Counts{Pass: 2, Fail: 1}); res.Counts != want {
				t.Errorf("Apply(%+v) counts = %+v, want %+v", opts, res.Counts, want)
			}
			if want := "warning: skipped " + fifo + ": not a regular file (a named pipe)\n"; warnings.String() != want {
				t.Errorf("Apply(%+v) warnings = %q, want %q", opts, warnings.String(), want)
			}
		})
	}
}

func TestApplyNamedNotRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "fifo.yaml"))
	tests := []struct {
		name string
		give ApplyOptions
	}{
		{name: "resource", give: ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{fifo}}},
		{name: "policy", give: ApplyOptions{PolicyPaths: []string{fifo}, ResourcePaths: []string{validateResources}}},
		{name: "values", give: ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{validateResources}, ValuesFile: fifo}},
		{name: "user info", give: ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{validateResources}, UserInfoFile: fifo}},
		{name: "exception", give: ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{validateResources}, ExceptionPaths: []string{fifo}}},
		{name: "target", give: ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{validateResources}, TargetPaths: []string{fifo}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := within(t, "Apply", func() (*ApplyResult, error) { return Apply(t.Context(), tt.give) })
			var nr *safefile.NotRegularError
			if !errors.As(err, &nr) || nr.Path != fifo {
				t.Errorf("Apply(%+v) error = %v, want a *safefile.NotRegularError naming %s", tt.give, err, fifo)
			}
		})
	}
}

func TestRunSkipsNotRegularFiles(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, validatePolicy, dir)
	copyFile(t, validateResources, filepath.Join(dir, "res"))
	fifo := mkfifo(t, filepath.Join(dir, "res", "fifo.yaml"))
	test := strings.Replace(readFile(t, "testdata/validate/.kyverno-test/kyverno-test.yaml"), "- ../require-team-label.yaml\nresources:\n- resources.yaml", "- require-team-label.yaml\nresources:\n- res", 1)
	if err := os.WriteFile(filepath.Join(dir, DefaultFileName), []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	testFIFO := mkfifo(t, filepath.Join(dir, "more", DefaultFileName))
	var warnings bytes.Buffer
	rep, err := within(t, "Run", func() (*Report, error) {
		return Run(t.Context(), []string{dir}, Options{Warnings: &warnings})
	})
	if err != nil {
		t.Fatalf("Run(%s) error = %v", dir, err)
	}
	if rep.Passed != 4 || rep.Failed != 0 {
		t.Errorf("Run(%s) = %d passed, %d failed, want 4 passed (%+v)", dir, rep.Passed, rep.Failed, rep.Results())
	}
	want := "warning: skipped " + testFIFO + ": not a regular file (a named pipe)\n" +
		"warning: skipped " + fifo + ": not a regular file (a named pipe)\n"
	if warnings.String() != want {
		t.Errorf("Run(%s) warnings = %q, want %q", dir, warnings.String(), want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pods is a multi-document file of n small Pods, and the offset where each
// document ends.
func pods(n int) (string, []int) {
	var b strings.Builder
	ends := make([]int, n)
	for i := range n {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  labels: {team: t}\nspec:\n  containers:\n  - {name: c, image: nginx}\n---\n", i)
		ends[i] = b.Len()
	}
	return b.String(), ends
}

// recorder is an applyEmitter that records, for each resource, how many
// bytes of the input had been read when it came out.
type recorder struct {
	read  func() int
	names []string
	at    []int
	first chan struct{}
}

func (r *recorder) start(*ApplyResult) error { return nil }

func (r *recorder) resource(res *Resource, _ []ApplyResponse, _ []PolicyOutput) error {
	r.names = append(r.names, res.Name)
	if r.read != nil {
		r.at = append(r.at, r.read())
	}
	if r.first != nil && len(r.names) == 1 {
		close(r.first)
	}
	return nil
}

func (r *recorder) finish(*ApplyResult, int) error { return nil }

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

func (c *countingReader) read() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// seamFile is a placeholder resource file whose content r gives, and the
// open seam that opens it (and other files as usual).
func seamFile(t *testing.T, r io.ReadCloser) (string, func(string) (io.ReadCloser, error)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func(p string) (io.ReadCloser, error) {
		if p == path {
			return r, nil
		}
		return safefile.Open(p)
	}
}

func TestApplyStreamsFromAPipe(t *testing.T) {
	// The first resource's results come out while the writer still holds
	// back the rest of the file: Apply does not wait for the end.
	for _, workers := range []int{1, 0} { // one, GOMAXPROCS
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			pr, pw := io.Pipe()
			path, open := seamFile(t, pr)
			rec := &recorder{first: make(chan struct{})}
			body, ends := pods(50)
			writerErr := make(chan error, 1)
			go func() {
				defer pw.Close()
				if _, err := io.WriteString(pw, body[:ends[0]]); err != nil {
					writerErr <- err
					return
				}
				select {
				case <-rec.first:
				case <-time.After(20 * time.Second):
					writerErr <- errors.New("the first resource did not come out before the rest of the file was written")
					return
				}
				_, err := io.WriteString(pw, body[ends[0]:])
				writerErr <- err
			}()
			opts := ApplyOptions{
				PolicyPaths:   []string{validatePolicy},
				ResourcePaths: []string{path},
				Parallelism:   workers,
				open:          open,
			}
			if _, err := apply(t.Context(), opts, rec); err != nil {
				t.Fatalf("apply() error = %v", err)
			}
			if err := <-writerErr; err != nil {
				t.Fatal(err)
			}
			if len(rec.names) != 50 {
				t.Errorf("apply() emitted %d resources, want 50", len(rec.names))
			}
		})
	}
}

func TestApplyHoldsAWindowOfDocuments(t *testing.T) {
	// Each resource comes out before the reader is more than its buffer
	// and a window of documents ahead of it: memory does not grow with
	// the file, with one worker (inline) and with two.
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			const n = 3000
			body, ends := pods(n)
			cr := &countingReader{r: strings.NewReader(body)}
			path, open := seamFile(t, io.NopCloser(cr))
			rec := &recorder{read: cr.read}
			opts := ApplyOptions{
				PolicyPaths:   []string{validatePolicy},
				ResourcePaths: []string{path},
				Parallelism:   workers,
				open:          open,
			}
			if _, err := apply(t.Context(), opts, rec); err != nil {
				t.Fatalf("apply() error = %v", err)
			}
			if len(rec.names) != n {
				t.Fatalf("apply() emitted %d resources, want %d", len(rec.names), n)
			}
			docLen := ends[0]
			slack := 64<<10 + ((ApplyWindow+1)*workers+2)*docLen // the decoder's buffer, the window, the jobs running
			for i, at := range rec.at {
				if at > ends[i]+slack {
					t.Fatalf("resource %d came out after %d bytes were read, want at most %d (its end %d + %d)", i, at, ends[i]+slack, ends[i], slack)
				}
			}
			if want := fmt.Sprintf("p%d", n-1); rec.names[n-1] != want {
				t.Errorf("last resource = %s, want %s (in order)", rec.names[n-1], want)
			}
		})
	}
}

func TestApplyDocumentLimit(t *testing.T) {
	const limit = 512
	pod := func(name string, size int) string { // a document of exactly size bytes
		d := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations:\n    pad: ", name)
		return d + strings.Repeat("x", size-len(d)-1) + "\n"
	}
	tests := []struct {
		name     string
		give     string
		wantLine int // of the document over the limit; 0: none
	}{
		{name: "at the limit", give: pod("a", limit) + "---\n" + pod("b", 100)},
		{name: "over the limit", give: pod("a", 100) + "---\n" + pod("b", limit+1) + "---\n" + pod("c", 100), wantLine: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.yaml")
			if err := os.WriteFile(path, []byte(tt.give), 0o600); err != nil {
				t.Fatal(err)
			}
			opts := ApplyOptions{PolicyPaths: []string{validatePolicy}, ResourcePaths: []string{path}, MaxDocumentBytes: limit}
			res, err := Apply(t.Context(), opts)
			if tt.wantLine == 0 {
				if err != nil || len(res.Resources) != 2 {
					t.Errorf("Apply(%s) = %v, want 2 resources and no error", tt.name, err)
				}
				return
			}
			var de *kyverno.DocumentError
			var tl *kyverno.DocumentTooLargeError
			if !errors.As(err, &de) || !errors.As(err, &tl) {
				t.Fatalf("Apply(%s) error = %v, want a *kyverno.DocumentTooLargeError in a *kyverno.DocumentError", tt.name, err)
			}
			if de.Source != path || de.Line != tt.wantLine || tl.Limit != limit {
				t.Errorf("Apply(%s) error at %s:%d, limit %d; want %s:%d, limit %d", tt.name, de.Source, de.Line, tl.Limit, path, tt.wantLine, limit)
			}
		})
	}
}

func TestApplyWriteMatchesApply(t *testing.T) {
	// ApplyWrite writes what the writers of Apply's result write, also
	// when its spools move to temporary files.
	defer func(old int) { spoolThreshold = old }(spoolThreshold)
	fixtures := []struct {
		name string
		opts ApplyOptions
	}{
		{name: "validate", opts: ApplyOptions{PolicyPaths: []string{"testdata/validate/require-team-label.yaml", "testdata/namespaced/no-latest.yaml"}, ResourcePaths: []string{validateResources, "testdata/namespaced/pods.yaml"}}},
		{name: "values", opts: ApplyOptions{PolicyPaths: []string{"testdata/values/allowed-image.yaml"}, ResourcePaths: []string{"testdata/values/.kyverno-test/pods.yaml"}, ValuesFile: "testdata/values/.kyverno-test/values.yaml", UserInfoFile: "testdata/values/.kyverno-test/userinfo.yaml", AuditWarn: true}},
		{name: "mutate", opts: ApplyOptions{PolicyPaths: []string{"testdata/mutate"}, ResourcePaths: []string{"testdata/mutate/configmap.yaml"}}},
		{name: "generate", opts: ApplyOptions{PolicyPaths: []string{"testdata/generate/netpol.yaml"}, ResourcePaths: []string{"testdata/generate/namespaces.yaml"}}},
	}
	now := time.Unix(1700000000, 0)
	for _, threshold := range []int{spool.DefaultMemory, 64} {
		spoolThreshold = threshold
		for _, fx := range fixtures {
			fx.opts.Now = func() time.Time { return now }
			want, err := Apply(t.Context(), fx.opts)
			if err != nil {
				t.Fatalf("Apply(%s) error = %v", fx.name, err)
			}
			want.PrintMutated = true
			tests := []struct {
				name  string
				give  ApplyOutput
				write func(w io.Writer) error
			}{
				{name: "text", give: ApplyOutput{PrintMutated: true}, write: func(w io.Writer) error { return WriteApplyText(w, want) }},
				{name: "table", give: ApplyOutput{Format: ApplyTable, PrintMutated: true, Detailed: true}, write: func(w io.Writer) error { return WriteApplyTable(w, want, true) }},
				{name: "report yaml", give: ApplyOutput{Format: ApplyReportYAML}, write: func(w io.Writer) error { return WriteReports(w, want.Reports(), "yaml") }},
				{name: "report json", give: ApplyOutput{Format: ApplyReportJSON}, write: func(w io.Writer) error { return WriteReports(w, want.Reports(), "json") }},
			}
			for _, tt := range tests {
				var wantOut, gotOut bytes.Buffer
				if err := tt.write(&wantOut); err != nil {
					t.Fatalf("%s of Apply(%s) error = %v", tt.name, fx.name, err)
				}
				dir := t.TempDir()
				tt.give.MutatedPath = filepath.Join(dir, "got")
				tt.give.TempDir = dir
				if _, err := ApplyWrite(t.Context(), fx.opts, &gotOut, tt.give); err != nil {
					t.Fatalf("ApplyWrite(%s, %s) error = %v", fx.name, tt.name, err)
				}
				if diff := cmp.Diff(wantOut.String(), gotOut.String()); diff != "" {
					t.Errorf("ApplyWrite(%s, %s, spool %d) mismatch (-want +got):\n%s", fx.name, tt.name, threshold, diff)
				}
				if err := WriteMutatedTo(filepath.Join(dir, "want"), want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(readTree(t, filepath.Join(dir, "want")), readTree(t, filepath.Join(dir, "got"))); diff != "" {
					t.Errorf("ApplyWrite(%s, %s) mutated files mismatch (-want +got):\n%s", fx.name, tt.name, diff)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 2 {
					t.Errorf("ApplyWrite(%s, %s) left %d entries in its temporary folder, want only want and got", fx.name, tt.name, len(entries))
				}
			}
		}
	}
}

// readTree reads the files of a folder by name.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
	}
	return out
}
