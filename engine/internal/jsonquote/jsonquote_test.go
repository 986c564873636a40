package jsonquote

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		give         string
		wantMarshal  string
		wantIterator string
	}{
		{"plain", `"plain"`, `"plain"`},
		{"a\"b\\c", `"a\"b\\c"`, `"a\"b\\c"`},
		{"\n\r\t", `"\n\r\t"`, `"\n\r\t"`},
		{"\b\f", `"\b\f"`, `"\u0008\u000c"`},
		{"\x01<>&", `"\u0001\u003c\u003e\u0026"`, `"\u0001\u003c\u003e\u0026"`},
		{"\xff", `"\ufffd"`, `"\ufffd"`},
		{"\u2028\u2029é", `"\u2028\u2029é"`, `"\u2028\u2029é"`},
	}
	for _, tt := range tests {
		if got := string(Append(nil, tt.give, Marshal)); got != tt.wantMarshal {
			t.Errorf("Append(%q, Marshal) = %s, want %s", tt.give, got, tt.wantMarshal)
		}
		if got := string(Append(nil, tt.give, Iterator)); got != tt.wantIterator {
			t.Errorf("Append(%q, Iterator) = %s, want %s", tt.give, got, tt.wantIterator)
		}
	}
}

// FuzzMarshal compares Append(Marshal) with encoding/json.
func FuzzMarshal(f *testing.F) {
	for _, s := range []string{"", "a", "\b\f\n", "<&>", "\xff\xfe", "\u2028", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		if got := Append(nil, s, Marshal); string(got) != string(want) {
			t.Errorf("Append(%q, Marshal) = %s, want %s (json.Marshal)", s, got, want)
		}
	})
}
