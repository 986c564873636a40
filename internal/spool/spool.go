package spool

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// chunkSize is the size of the blocks a Spool keeps in memory: it grows
// one block at a time, without copying what it holds.
const chunkSize = 64 << 10

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

	mem  [][]byte // blocks of chunkSize: mem[:cur] full, mem[cur] filling
	cur  int
	size int
	f    *os.File
	bw   *bufio.Writer
}

// Write keeps p.
func (s *Spool) Write(p []byte) (int, error) {
	if s.f == nil {
		limit := s.Memory
		if limit <= 0 {
			limit = DefaultMemory
		}
		if s.size+len(p) <= limit {
			s.keep(p)
			return len(p), nil
		}
		f, err := os.CreateTemp(s.Dir, "verdict-spool-*")
		if err != nil {
			return 0, fmt.Errorf("spool output: %w", err)
		}
		os.Remove(f.Name()) // fails on Windows: removed at Close
		s.f, s.bw = f, bufio.NewWriterSize(f, 64<<10)
		for _, c := range s.mem {
			if _, err := s.bw.Write(c); err != nil {
				return 0, fmt.Errorf("spool output: %w", err)
			}
		}
		s.mem, s.cur, s.size = nil, 0, 0
	}
	n, err := s.bw.Write(p)
	if err != nil {
		err = fmt.Errorf("spool output: %w", err)
	}
	return n, err
}

// keep appends p to the blocks in memory.
func (s *Spool) keep(p []byte) {
	s.size += len(p)
	for len(p) > 0 {
		if s.cur == len(s.mem) {
			s.mem = append(s.mem, make([]byte, 0, chunkSize))
		}
		c := s.mem[s.cur]
		n := copy(c[len(c):cap(c)], p)
		s.mem[s.cur] = c[:len(c)+n]
		p = p[n:]
		if len(s.mem[s.cur]) == cap(c) {
			s.cur++
		}
	}
}

// Reader reads what was written, from the start. Nothing may be written
// while it is read.
func (s *Spool) Reader() (io.Reader, error) {
	if s.f == nil {
		rs := make([]io.Reader, 0, len(s.mem))
		for _, c := range s.mem {
			if len(c) > 0 {
				rs = append(rs, bytes.NewReader(c))
			}
		}
		return io.MultiReader(rs...), nil
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
	if s.f == nil {
		for _, c := range s.mem {
			if len(c) == 0 {
				break
			}
			if _, err := w.Write(c); err != nil {
				return err
			}
		}
		return nil
	}
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
	for i := range s.mem {
		s.mem[i] = s.mem[i][:0]
	}
	s.cur, s.size = 0, 0
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
