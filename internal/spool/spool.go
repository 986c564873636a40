package spool

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// DefaultMemory is how much a Spool keeps in memory before it moves to a
// temporary file, when its Memory is zero.
const DefaultMemory = 4 << 20

// Spool keeps what is written until it is copied out. The zero value is
// ready to use. It is not safe for concurrent use.
type Spool struct {
	// Dir is the folder of the temporary file. Default os.TempDir().
	Dir string
	// Memory is how many bytes are kept in memory. Default DefaultMemory.
	Memory int

	mem bytes.Buffer
	f   *os.File
	bw  *bufio.Writer
}

// Write keeps p.
func (s *Spool) Write(p []byte) (int, error) {
	if s.f == nil {
		limit := s.Memory
		if limit <= 0 {
			limit = DefaultMemory
		}
		if s.mem.Len()+len(p) <= limit {
			return s.mem.Write(p)
		}
		f, err := os.CreateTemp(s.Dir, "verdict-spool-*")
		if err != nil {
			return 0, fmt.Errorf("spool output: %w", err)
		}
		os.Remove(f.Name()) // fails on Windows: removed at Close
		s.f, s.bw = f, bufio.NewWriterSize(f, 64<<10)
		if _, err := s.bw.Write(s.mem.Bytes()); err != nil {
			return 0, fmt.Errorf("spool output: %w", err)
		}
		s.mem = bytes.Buffer{}
	}
	n, err := s.bw.Write(p)
	if err != nil {
		err = fmt.Errorf("spool output: %w", err)
	}
	return n, err
}

// Reader reads what was written, from the start. Nothing may be written
// while it is read.
func (s *Spool) Reader() (io.Reader, error) {
	if s.f == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, fmt.Errorf("spool output: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool output: %w", err)
	}
	return s.f, nil
}

// CopyTo copies what was written to w.
func (s *Spool) CopyTo(w io.Writer) error {
	r, err := s.Reader()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

// Reset drops what was written and removes the temporary file.
func (s *Spool) Reset() error {
	err := s.Close()
	s.mem.Reset()
	return err
}

// OnDisk reports whether the spool moved to a temporary file.
func (s *Spool) OnDisk() bool { return s.f != nil }

// Close removes the temporary file.
func (s *Spool) Close() error {
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	os.Remove(name)
	s.f, s.bw = nil, nil
	return err
}
