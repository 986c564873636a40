package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

// FuzzOpen writes the input to a store file and opens it, loads it and
// writes to it: any input gives a store or an error, never a panic or a
// crash. Seeds: a small real store, truncations of it, a copy with its
// first meta page damaged, and an empty file.
func FuzzOpen(f *testing.F) {
	valid := newStoreFile(f)
	ps := os.Getpagesize()
	f.Add(valid)
	for _, n := range []int{0, 16, ps, 2 * ps, 3*ps + 100, len(valid) / 2} {
		if n < len(valid) {
			f.Add(valid[:n])
		}
	}
	metaDamaged := append([]byte(nil), valid...)
	metaDamaged[20] ^= 0xff
	f.Add(metaDamaged)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "reports.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		s, err := boltstore.Open(path, boltstore.NoSync(boltstore.Options{LockTimeout: 10 * time.Millisecond}))
		if err != nil {
			if len(data) == 0 && !errors.Is(err, boltstore.ErrCorrupt) {
				t.Errorf("Open(empty file) = %v, want ErrCorrupt", err)
			}
			return
		}
		defer s.Close()
		if _, err := s.Load(context.Background()); err != nil {
			return
		}
		_ = s.Write(context.Background(), sampleChanges())
	})
}
