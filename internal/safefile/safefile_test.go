package safefile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// special makes a regular file, a named pipe, a socket and symbolic links
// to each in a temporary folder.
func special(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file.yaml"), []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, n := range []string{"file", "fifo", "sock"} {
		if err := os.Symlink(n+".yaml", filepath.Join(dir, "link-"+n+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpen(t *testing.T) {
	dir := special(t)
	tests := []struct {
		name     string
		giveFile string
		wantMode fs.FileMode // type of the *NotRegularError; 0 for none
	}{
		{name: "regular file", giveFile: "file.yaml"},
		{name: "link to a regular file", giveFile: "link-file.yaml"},
		{name: "named pipe", giveFile: "fifo.yaml", wantMode: fs.ModeNamedPipe},
		{name: "link to a named pipe", giveFile: "link-fifo.yaml", wantMode: fs.ModeNamedPipe},
		{name: "socket", giveFile: "sock.yaml", wantMode: fs.ModeSocket},
		{name: "link to a socket", giveFile: "link-sock.yaml", wantMode: fs.ModeSocket},
		{name: "folder", giveFile: ".", wantMode: fs.ModeDir},
		{name: "character device", giveFile: "/dev/null", wantMode: fs.ModeCharDevice | fs.ModeDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.giveFile
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			for _, open := range []struct {
				name string
				fn   func(string) error
			}{
				{"Open", func(p string) error {
					f, err := Open(p)
					if err == nil {
						f.Close()
					}
					return err
				}},
				{"openRegular", func(p string) error { // no Stat first: the check after the open
					f, err := openRegular(p)
					if err == nil {
						f.Close()
					}
					return err
				}},
				{"ReadFile", func(p string) error { _, err := ReadFile(p, 0); return err }},
			} {
				done := make(chan error, 1)
				go func() { done <- open.fn(path) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s(%s) blocks", open.name, tt.giveFile)
				}
				var nr *NotRegularError
				if tt.wantMode == 0 {
					if err != nil {
						t.Errorf("%s(%s) = %v, want no error", open.name, tt.giveFile, err)
					}
					continue
				}
				if open.name == "openRegular" && tt.wantMode == fs.ModeSocket {
					continue // a socket cannot be opened: ENXIO
				}
				if !errors.As(err, &nr) || nr.Mode.Type() != tt.wantMode || nr.Path != path {
					t.Errorf("%s(%s) = %v, want a *NotRegularError of mode %v naming %s", open.name, tt.giveFile, err, tt.wantMode, path)
				}
			}
		})
	}
}

func TestStat(t *testing.T) {
	dir := special(t)
	for _, name := range []string{"file.yaml", "link-file.yaml", "."} {
		if _, err := Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("Stat(%s) = %v, want no error", name, err)
		}
	}
	for _, name := range []string{"fifo.yaml", "link-fifo.yaml", "sock.yaml"} {
		var nr *NotRegularError
		if _, err := Stat(filepath.Join(dir, name)); !errors.As(err, &nr) {
			t.Errorf("Stat(%s) = %v, want a *NotRegularError", name, err)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.yaml")
	const limit = 16
	tests := []struct {
		name    string
		give    int
		wantErr bool
	}{
		{name: "under", give: limit - 1},
		{name: "at", give: limit},
		{name: "over", give: limit + 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(strings.Repeat("x", tt.give)), 0o600); err != nil {
				t.Fatal(err)
			}
			data, err := ReadFile(path, limit)
			var tl *TooLargeError
			if got := errors.As(err, &tl); got != tt.wantErr {
				t.Fatalf("ReadFile(%d bytes, %d) = %v, want a *TooLargeError: %v", tt.give, limit, err, tt.wantErr)
			}
			if !tt.wantErr && len(data) != tt.give {
				t.Errorf("ReadFile(%d bytes, %d) = %d bytes", tt.give, limit, len(data))
			}
			if tt.wantErr && (tl.Limit != limit || tl.Path != path) {
				t.Errorf("ReadFile(%d bytes, %d) = %v, want the path and the limit", tt.give, limit, err)
			}
		})
	}
}

func TestContextReader(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(t.Context())
	r := NewContextReader(ctx, pr)
	go func() { pw.Write([]byte("first")) }()
	buf := make([]byte, 16)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("Read() = %q, %v, want first", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Read(buf); done <- err }() // blocks: nothing more written
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read() after cancel = %v, want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read() still blocked after its context ended")
	}
	if _, err := r.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("Read() once cancelled = %v, want %v", err, context.Canceled)
	}
}

func TestFiles(t *testing.T) {
	dir := special(t)
	for _, name := range []string{"sub/x.yaml", "note.txt", ".hidden/h.yaml", ".h.yaml"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("none.yaml", filepath.Join(dir, "link-none.yaml")); err != nil {
		t.Fatal(err)
	}
	yaml := func(name string) bool { return strings.HasSuffix(name, ".yaml") }
	got := map[string]string{}
	files, err := Files(dir, yaml, func(path string, err error) error {
		var nr *NotRegularError
		switch {
		case errors.As(err, &nr):
			got[filepath.Base(path)] = "not regular"
		case errors.Is(err, fs.ErrNotExist):
			got[filepath.Base(path)] = "not found"
		default:
			got[filepath.Base(path)] = err.Error()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Files(%s) = %v", dir, err)
	}
	want := []string{"file.yaml", "link-file.yaml", "sub/x.yaml"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("Files(%s) files (-want +got):\n%s", dir, diff)
	}
	wantSkipped := map[string]string{
		"fifo.yaml": "not regular", "link-fifo.yaml": "not regular", "sock.yaml": "not regular",
		"link-sock.yaml": "not regular", "link-none.yaml": "not found",
	}
	if diff := cmp.Diff(wantSkipped, got); diff != "" {
		t.Errorf("Files(%s) notRegular calls (-want +got):\n%s", dir, diff)
	}

	stop := errors.New("stop")
	if _, err := Files(dir, yaml, func(string, error) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Files(%s) with a failing notRegular = %v, want %v", dir, err, stop)
	}
}
