//go:build unix

package boltstore_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reports.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := openAndLoad(path)
	var ce *boltstore.CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("Open(FIFO) = %v, want a *CorruptError", err)
	}
}
