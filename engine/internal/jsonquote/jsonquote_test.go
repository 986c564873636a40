package jsonquote

import (
	"encoding/json"
	"errors"
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

// jsonElem writes strings and nested containers, and fails on anything
// else, as the engine's encoders do.
func jsonElem(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case string:
		return Append(dst, t, Marshal), nil
	case map[string]any:
		return AppendObject(dst, t, Marshal, jsonElem)
	case []any:
		return AppendArray(dst, t, jsonElem)
	}
	return dst, errNotString
}

var errNotString = errors.New("not a string")

func TestAppendContainers(t *testing.T) {
	tests := []struct {
		name    string
		give    any
		wantErr bool
	}{
		{name: "nil map", give: map[string]any(nil)},
		{name: "nil list", give: []any(nil)},
		{name: "empty", give: map[string]any{"m": map[string]any{}, "l": []any{}}},
		{name: "keys sorted and quoted", give: map[string]any{"b": "1", "a<": []any{"x", "y"}, "": map[string]any{"z": "&"}}},
		{name: "element error", give: []any{"a", 1.0}, wantErr: true},
		{name: "value error", give: map[string]any{"a": true}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonElem(nil, tt.give)
			if tt.wantErr {
				if !errors.Is(err, errNotString) {
					t.Fatalf("jsonElem(%v) error = %v, want %v", tt.give, err, errNotString)
				}
				return
			}
			want, _ := json.Marshal(tt.give)
			if err != nil || string(got) != string(want) {
				t.Errorf("jsonElem(%v) = %s, %v, want %s", tt.give, got, err, want)
			}
		})
	}
}
