package mpol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// TestApplyOpsCopyLimit checks MaxJSONPatchCopyBytes' accounting with a
// small limit: copies of a 1000-byte value are refused once what they
// added passes the limit, and a patch without copies is not counted.
func TestApplyOpsCopyLimit(t *testing.T) {
	doc := []byte(`{"a":"` + strings.Repeat("x", 998) + `"}`)
	copies := func(n int) jsonpatch.Patch {
		var ops []string
		for i := range n {
			ops = append(ops, `{"op":"copy","from":"/a","path":"/c`+string(rune('0'+i))+`"}`)
		}
		p, err := jsonpatch.DecodePatch([]byte("[" + strings.Join(ops, ",") + "]"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		give     jsonpatch.Patch
		giveMax  int64
		wantKeys int
		wantErr  bool
	}{
		{name: "under the limit", give: copies(2), giveMax: 2100, wantKeys: 3},
		{name: "at the limit", give: copies(2), giveMax: 2014, wantKeys: 3},
		{name: "over the limit", give: copies(3), giveMax: 2014, wantErr: true},
		{name: "no copy is not counted", give: mustPatch(t, `[{"op":"add","path":"/b","value":"`+strings.Repeat("y", 5000)+`"}]`), giveMax: 10, wantKeys: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := applyOpsWithin(tt.give, doc, tt.giveMax)
			var sizeErr *jsonpatch.AccumulatedCopySizeError
			if got := errors.As(err, &sizeErr); got != tt.wantErr {
				t.Fatalf("applyOpsWithin(%s) error = %v, want a size error: %v", tt.name, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil || len(m) != tt.wantKeys {
				t.Errorf("applyOpsWithin(%s) = %d keys (%v), want %d", tt.name, len(m), err, tt.wantKeys)
			}
		})
	}
}

func mustPatch(t *testing.T, s string) jsonpatch.Patch {
	t.Helper()
	p, err := jsonpatch.DecodePatch([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
