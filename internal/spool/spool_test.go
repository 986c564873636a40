package spool

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestSpool(t *testing.T) {
	tests := []struct {
		name       string
		giveMemory int
		giveWrites []string
		wantOnDisk bool
	}{
		{name: "in memory", giveMemory: 16, giveWrites: []string{"0123456789", "abcdef"}},
		{name: "moves to a file", giveMemory: 16, giveWrites: []string{"0123456789", "abcdefg", strings.Repeat("z", 100000)}, wantOnDisk: true},
		{name: "one write over the limit", giveMemory: 4, giveWrites: []string{"0123456789"}, wantOnDisk: true},
		{name: "blocks in memory", giveMemory: 4 * chunkSize, giveWrites: []string{strings.Repeat("a", chunkSize-1), "bc", strings.Repeat("d", 2*chunkSize), "e"}},
		{name: "exactly the limit, in blocks", giveMemory: 2 * chunkSize, giveWrites: []string{strings.Repeat("a", chunkSize), strings.Repeat("b", chunkSize)}},
		{name: "blocks moved to a file", giveMemory: 2 * chunkSize, giveWrites: []string{strings.Repeat("a", chunkSize+3), strings.Repeat("b", chunkSize), "c"}, wantOnDisk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := &Spool{Dir: dir, Memory: tt.giveMemory}
			for _, w := range tt.giveWrites {
				if _, err := s.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			if s.OnDisk() != tt.wantOnDisk {
				t.Errorf("Spool(%v).OnDisk() = %v, want %v", tt.giveWrites, s.OnDisk(), tt.wantOnDisk)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("Spool left %d files in its folder, want none (unlinked)", len(entries))
			}
			for range 2 { // copied out twice: the same
				var got bytes.Buffer
				if err := s.CopyTo(&got); err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(tt.giveWrites, ""); got.String() != want {
					t.Errorf("Spool(%v).CopyTo() = %d bytes, want %d", tt.giveWrites, got.Len(), len(want))
				}
			}
			if err := s.Reset(); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := s.CopyTo(&got); err != nil || got.Len() != 0 {
				t.Errorf("Spool.CopyTo() after Reset = %q, %v; want nothing", got.String(), err)
			}
			// Written again after Reset, read through Reader.
			for _, w := range tt.giveWrites {
				if _, err := s.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			r, err := s.Reader()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			if want := strings.Join(tt.giveWrites, ""); err != nil || string(data) != want {
				t.Errorf("Spool(%v).Reader() after Reset = %d bytes, %v; want %d bytes", tt.giveWrites, len(data), err, len(want))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
