package boltstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
)

// newStoreFile writes a small store with one intermediary report, one
// final report and a tombstone, and returns the bytes of its file.
func newStoreFile(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reports.db")
	s, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	if err := s.Write(context.Background(), sampleChanges()); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func sampleChanges() *reportwriter.Changes {
	pod := reportwriter.Resource{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web", UID: "uid-web"}
	return &reportwriter.Changes{
		PutIntermediaries: []*reportwriter.Intermediary{{
			Source: reportwriter.SourceAdmission, Owner: pod,
			Policies: []reportwriter.PolicyVersion{{Kind: "ClusterPolicy", Name: "p", Hash: "h", Time: t0}},
			Results:  []reportwriter.Entry{{Policy: "p", Rule: "r", Result: "pass"}},
		}},
		PutReports: []*reportwriter.StoredReport{{
			Key: reportwriter.ReportKey{Namespace: "shop", Name: "cpol-p"}, Policy: "p",
			Created: t0, Updated: t0, Report: []byte(`{"kind":"PolicyReport"}`),
		}},
		PutTombstones: map[string]time.Time{"uid-gone": t0},
	}
}

// writeFile writes b to a new file and returns its path.
func writeFile(t testing.TB, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reports.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openAndLoad opens the store at path and loads it.
func openAndLoad(path string) (*reportwriter.State, error) {
	s, err := boltstore.Open(path, boltstore.Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Load(context.Background())
}

func TestOpenValid(t *testing.T) {
	tests := []struct {
		name string
		give func(t *testing.T) string
	}{
		{"new file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "reports.db") }},
		{"store with records", func(t *testing.T) string { return writeFile(t, newStoreFile(t)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.give(t)
			st, err := openAndLoad(path)
			if err != nil {
				t.Fatalf("Open(%s) = %v, want nil", tt.name, err)
			}
			if st == nil {
				t.Fatalf("Load(%s) = nil state", tt.name)
			}
			// Nothing but the store is left in the folder.
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("Open(%s) left %d files in the folder, want 1", tt.name, len(entries))
			}
		})
	}
}

// TestOpenKeepsRecords checks that a store opened again (with Verify) holds
// what was written.
func TestOpenKeepsRecords(t *testing.T) {
	path := writeFile(t, newStoreFile(t))
	s, err := boltstore.Open(path, boltstore.Options{Verify: true})
	if err != nil {
		t.Fatalf("Open(%s, Verify) = %v, want nil", path, err)
	}
	defer s.Close()
	st, err := s.Load(t.Context())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := sampleChanges()
	got := &reportwriter.Changes{PutIntermediaries: st.Intermediaries, PutReports: st.Reports, PutTombstones: st.Tombstones}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
}

// TestOpenDamaged opens files that are not usable stores: each is a
// *CorruptError naming the file, never a panic or a crash (before the
// checks, a truncated file was a SIGBUS and an empty one opened empty).
func TestOpenDamaged(t *testing.T) {
	valid := newStoreFile(t)
	pageSize := os.Getpagesize()
	garbage := make([]byte, 4*pageSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	// The pages after the metas (free list, buckets, records) overwritten
	// with garbage: the metas still check.
	pagesDamaged := append([]byte(nil), valid...)
	copy(pagesDamaged[2*pageSize:], garbage)
	// A bucket of the root page whose root is that page: a cycle (bbolt's
	// cursor would descend forever).
	cycle := append([]byte(nil), valid...)
	makeCycle(t, cycle)
	// Both metas damaged.
	metasDamaged := append([]byte(nil), valid...)
	metasDamaged[20] ^= 0xff
	metasDamaged[pageSize+20] ^= 0xff

	type give struct {
		name string
		data []byte
	}
	tests := []give{
		{"zero bytes", nil},
		{"random bytes", garbage},
		{"both metas damaged", metasDamaged},
		{"pages after the metas damaged", pagesDamaged},
		{"a cycle in the tree", cycle},
	}
	used := pagesInUse(valid) * pageSize
	for _, off := range []int{1, 15, 100, pageSize - 1, pageSize, pageSize + 100, 2 * pageSize, 3*pageSize + 7, used - pageSize, used - 1} {
		tests = append(tests, give{"truncated at " + strconv.Itoa(off), valid[:off]})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.data)
			_, err := openAndLoad(path)
			var ce *boltstore.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Open(%s) = %v, want a *CorruptError", tt.name, err)
			}
			if ce.Path != path {
				t.Errorf("Open(%s): CorruptError.Path = %q, want %q", tt.name, ce.Path, path)
			}
			if !errors.Is(err, boltstore.ErrCorrupt) {
				t.Errorf("Open(%s) = %v, want errors.Is ErrCorrupt", tt.name, err)
			}
		})
	}
}

// pagesInUse reads the high water mark of a store file: the pgid field of
// the meta with the highest transaction id (bbolt's layout: a 16-byte page
// header, then magic, version, page size, flags (4 bytes each), root
// bucket (16), freelist, pgid, txid (8 each)).
func pagesInUse(b []byte) int {
	return int(binary.NativeEndian.Uint64(metaInUse(b)[40:]))
}

// metaInUse returns the meta (after its page header) with the highest
// transaction id.
func metaInUse(b []byte) []byte {
	ne := binary.NativeEndian
	var out []byte
	for _, off := range []int{0, os.Getpagesize()} {
		m := b[off+16:]
		if out == nil || ne.Uint64(m[48:]) > ne.Uint64(out[48:]) {
			out = m
		}
	}
	return out
}

// makeCycle points the first bucket of the root page of store file b to
// that page (bbolt's layout: the root page id at 16 in the meta; a leaf page's
// elements after its 16-byte header, 16 bytes each: flags, pos, ksize,
// vsize (uint32); a bucket's value starts with its root page id).
func makeCycle(t *testing.T, b []byte) {
	t.Helper()
	ne := binary.NativeEndian
	ps := os.Getpagesize()
	root := ne.Uint64(metaInUse(b)[16:])
	page := b[int(root)*ps:]
	if ne.Uint16(page[10:]) == 0 {
		t.Fatal("makeCycle: the root page has no element")
	}
	e := page[16:]
	if ne.Uint32(e)&1 == 0 {
		t.Fatal("makeCycle: the first element of the root page is not a bucket")
	}
	v := e[ne.Uint32(e[4:])+ne.Uint32(e[8:]):]
	ne.PutUint64(v, root)
}

// TestOpenTruncatedAfterPagesInUse opens a file cut after the pages its
// meta says are in use: nothing is lost, it opens.
func TestOpenTruncatedAfterPagesInUse(t *testing.T) {
	b := newStoreFile(t)
	used := pagesInUse(b) * os.Getpagesize()
	if used >= len(b) {
		t.Skipf("the file (%d bytes) has no unused pages after the %d bytes in use", len(b), used)
	}
	st, err := openAndLoad(writeFile(t, b[:used]))
	if err != nil {
		t.Fatalf("Open(truncated at %d, the end of the pages in use) = %v, want nil", used, err)
	}
	if len(st.Intermediaries) != 1 || len(st.Reports) != 1 {
		t.Errorf("Load(truncated at %d) = %d intermediaries, %d reports, want 1, 1", used, len(st.Intermediaries), len(st.Reports))
	}
}

// TestOpenOneMetaDamaged opens a store whose first meta page is damaged:
// bbolt uses the second, as it does after a torn write.
func TestOpenOneMetaDamaged(t *testing.T) {
	b := newStoreFile(t)
	b[20] ^= 0xff
	if _, err := openAndLoad(writeFile(t, b)); err != nil {
		t.Errorf("Open(meta 0 damaged) = %v, want nil", err)
	}
}
