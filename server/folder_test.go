package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/verdict-policy/verdict/internal/safefile"
)

// nextSnapshot waits for the next snapshot of a running source.
func nextSnapshot(t *testing.T, snaps <-chan Snapshot, what string) Snapshot {
	t.Helper()
	select {
	case s := <-snaps:
		return s
	case <-time.After(20 * time.Second):
		t.Fatalf("no snapshot %s after 20s: the folder reader is blocked", what)
		return Snapshot{}
	}
}

// skippedPaths are the paths of the *safefile.NotRegularError of a
// snapshot.
func skippedPaths(s Snapshot) []string {
	var out []string
	for _, e := range s.Errors {
		var nr *safefile.NotRegularError
		if errors.As(e.Err, &nr) && e.Origin == nr.Path {
			out = append(out, nr.Path)
		}
	}
	return out
}

func TestFolderSourceSkipsNotRegularFiles(t *testing.T) {
	dir, src := policyFolder(t, map[string]string{"delete.yaml": protectDeletePolicy})
	atStart := filepath.Join(dir, "sub", "start.yaml")
	if err := os.MkdirAll(filepath.Dir(atStart), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(atStart, 0o600); err != nil {
		t.Fatal(err)
	}
	snaps := make(chan Snapshot, 16)
	go src.Run(t.Context(), func(s Snapshot) { snaps <- s })

	first := nextSnapshot(t, snaps, "at start")
	if len(first.Documents) != 1 {
		t.Errorf("FolderSource at start: %d documents, want the policy of delete.yaml", len(first.Documents))
	}
	if got := skippedPaths(first); len(got) != 1 || got[0] != atStart {
		t.Errorf("FolderSource at start reported %v as not regular files, want [%s] (errors %v)", got, atStart, first.Errors)
	}

	// A pipe added while it runs, and a link to one, are reported at the
	// next poll, and the policy stays.
	added := filepath.Join(dir, "added.json")
	if err := syscall.Mkfifo(added, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yml")
	if err := os.Symlink(added, link); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		s := nextSnapshot(t, snaps, "after a pipe was added")
		if len(s.Documents) != 1 {
			t.Errorf("FolderSource after a pipe was added: %d documents, want 1", len(s.Documents))
		}
		got = skippedPaths(s)
	}
	if want := []string{added, link, atStart}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("FolderSource reported %v as not regular files, want %v", got, want)
	}
}

func TestFolderSourceFileLimit(t *testing.T) {
	dir, src := policyFolder(t, map[string]string{"delete.yaml": protectDeletePolicy})
	src.MaxFileBytes = int64(len(protectDeletePolicy)) + 10
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(protectDeletePolicy+"\n# "+strings.Repeat("x", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	snaps := make(chan Snapshot, 16)
	go src.Run(t.Context(), func(s Snapshot) { snaps <- s })

	s := nextSnapshot(t, snaps, "at start")
	if len(s.Documents) != 1 {
		t.Errorf("FolderSource{MaxFileBytes: %d}: %d documents, want the policy of delete.yaml only", src.MaxFileBytes, len(s.Documents))
	}
	var tooLarge *safefile.TooLargeError
	if len(s.Errors) != 1 || s.Errors[0].Origin != big || !errors.As(s.Errors[0].Err, &tooLarge) {
		t.Errorf("FolderSource{MaxFileBytes: %d} errors = %v, want one *safefile.TooLargeError for %s", src.MaxFileBytes, s.Errors, big)
	}
}
