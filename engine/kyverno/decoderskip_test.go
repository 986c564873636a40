package kyverno

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecoderSkip: the documents Skip skips give no objects and no error,
// and count in the index of the errors after them, which are those of
// SplitDocuments; JSON documents are always decoded.
func TestDecoderSkip(t *testing.T) {
	tests := []struct {
		name      string
		give      string
		wantNames []string
		wantErr   bool // the error SplitDocuments gives for give
	}{
		{"skipped object", "kind: Pod\nmetadata: {name: skip-me}\n---\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"a"}, false},
		{"skipped document that does not decode", "a: [ skip-me\n---\nkind: Pod\nmetadata: {name: b}\n", []string{"b"}, false},
		{"error after a skipped document", "kind: Pod\nmetadata: {name: skip-me}\n---\nkind: Pod\nmetadata: {name: c}\n---\nc: [\n", []string{"c"}, true},
		{"JSON is decoded", "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"skip-me\"}}\n---\n{\"kind\": \"Pod\", \"metadata\": {\"name\": \"d\"}}\n", []string{"skip-me", "d"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := NewDecoder("r.yaml", strings.NewReader(tt.give), 0)
			dec.Skip = func(doc string) bool { return strings.Contains(doc, "skip-me") }
			var names []string
			for dec.Next() {
				for _, o := range dec.Objects() {
					meta, _ := o.Value["metadata"].(map[string]any)
					name, _ := meta["name"].(string)
					names = append(names, name)
				}
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("Decoder(%q) with Skip names (-want +got):\n%s", tt.give, diff)
			}
			want := ""
			if tt.wantErr {
				_, err := SplitDocuments("r.yaml", []byte(tt.give))
				want = errString(err)
			}
			if got := errString(dec.Err()); got != want {
				t.Errorf("Decoder(%q) with Skip error = %q, want %q", tt.give, got, want)
			}
		})
	}
}
