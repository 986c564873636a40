package kubestore

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEncodeTombstones checks that the tombstone annotation keeps the
// newest tombstones within the max bytes, and decodes to the same times.
func TestEncodeTombstones(t *testing.T) {
	base := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	tombs := map[string]time.Time{}
	for i := range 100 {
		tombs[fmt.Sprintf("uid-%03d", i)] = base.Add(time.Duration(i) * time.Second)
	}
	// One entry is "uid-000":1740830400123456789, 29 bytes, and a comma.
	tests := []struct {
		name     string
		giveMax  int
		wantKept int
	}{
		{"all fit", DefaultMaxTombstoneBytes, 100},
		{"ten newest", 2 + 10*30, 10},
		{"not one", 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, left := encodeTombstones(tombs, tt.giveMax)
			if len(v) > tt.giveMax && tt.wantKept > 0 {
				t.Errorf("encodeTombstones(100, %d) = %d bytes, want at most %d", tt.giveMax, len(v), tt.giveMax)
			}
			if left != 100-tt.wantKept {
				t.Errorf("encodeTombstones(100, %d) left out %d, want %d", tt.giveMax, left, 100-tt.wantKept)
			}
			got, err := decodeTombstones(v)
			if err != nil {
				t.Fatalf("decodeTombstones(%q): %v", v, err)
			}
			want := map[string]time.Time{}
			for i := 100 - tt.wantKept; i < 100; i++ {
				k := fmt.Sprintf("uid-%03d", i)
				want[k] = tombs[k]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decodeTombstones(encodeTombstones(100, %d)) (-want +got):\n%s", tt.giveMax, diff)
			}
		})
	}
}

func TestDecodeTombstonesError(t *testing.T) {
	for _, give := range []string{"", "[]", `{"a":"b"}`} {
		if _, err := decodeTombstones(give); err == nil {
			t.Errorf("decodeTombstones(%q) = nil error, want an error", give)
		}
	}
}
