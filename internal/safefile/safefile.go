package safefile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// NotRegularError is the error of a path that is not a regular file (nor a
// symbolic link to one).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, kind(e.Mode))
}

// fileKinds names the kinds of file that are not regular, in the order
// kind tests their mode bits (a character device is a device too).
var fileKinds = []struct {
	bit  fs.FileMode
	name string
}{
	{fs.ModeDir, "a folder"},
	{fs.ModeNamedPipe, "a named pipe"},
	{fs.ModeSocket, "a socket"},
	{fs.ModeCharDevice, "a character device"},
	{fs.ModeDevice, "a device"},
	{fs.ModeSymlink, "a symbolic link"},
}

func kind(m fs.FileMode) string {
	for _, k := range fileKinds {
		if m&k.bit != 0 {
			return k.name
		}
	}
	return "an irregular file"
}

// TooLargeError is the error of a file ReadFile does not read whole.
type TooLargeError struct {
	Path  string
	Limit int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes, the limit on this file", e.Path, e.Limit)
}

// Stat is os.Stat (symbolic links followed) for the entries a walker may
// read or descend into: a *NotRegularError for anything that is neither a
// regular file nor a folder.
func Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return fi, nil
}

// Open opens a regular file for reading. Anything else is a
// *NotRegularError: the path is checked before it is opened, and the file
// after (a file swapped for a named pipe in between is opened without
// blocking, then refused).
//
// The errors of a path that cannot be opened are os.Open's.
func Open(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return openRegular(path)
}

// openRegular opens path without blocking and checks that what it opened
// is a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// ReadFile reads a regular file whole, as os.ReadFile does. A file larger
// than limit bytes is a *TooLargeError (limit zero or less: no limit).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// NewContextReader returns a reader of r whose Read returns ctx's error as
// soon as ctx ends, even when a Read of r blocks (that Read goes on in the
// background and its data is dropped). Once ctx ended, every Read fails.
func NewContextReader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &contextReader{ctx: ctx, r: r, done: make(chan readResult, 1)}
}

type contextReader struct {
	ctx  context.Context
	r    io.Reader
	buf  []byte
	done chan readResult
	err  error // sticky: set when a Read was abandoned
}

type readResult struct {
	n   int
	err error
}

func (c *contextReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		return 0, err
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	go func() {
		n, err := c.r.Read(buf)
		c.done <- readResult{n, err}
	}()
	select {
	case res := <-c.done:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-c.ctx.Done():
		// The Read goes on with buf, which is never used again.
		c.err = c.ctx.Err()
		c.buf = nil
		return 0, c.err
	}
}

// Files lists the files below dir whose names keep accepts, in lexical
// order: what the folder walkers of policies and resources read. Entries
// whose name starts with a dot are left out (a folder with all it holds),
// but dir itself. An entry that is not a regular file itself (a symbolic
// link, a named pipe, a device, a socket) is stat'ed, following links: a
// regular file is listed; for anything else notRegular is called with
// its path and the stat's error or a *NotRegularError, and the entry is
// left out when it returns nil. An error of notRegular or of the walk
// ends it; the files listed until then are returned with the error.
func Files(dir string, keep func(name string) bool, notRegular func(path string, err error) error) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !keep(d.Name()) {
			return nil
		}
		if !d.Type().IsRegular() {
			fi, err := os.Stat(path)
			if err == nil && !fi.Mode().IsRegular() {
				err = &NotRegularError{Path: path, Mode: fi.Mode()}
			}
			if err != nil {
				return notRegular(path, err)
			}
		}
		out = append(out, path)
		return nil
	})
	slices.Sort(out)
	return out, err
}
