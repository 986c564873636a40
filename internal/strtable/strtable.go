package strtable

// Limits of a Table.
const (
	// MaxStrings bounds the strings a Table holds; when it is full, the
	// table starts over (the strings already shared stay shared, new ones
	// are shared from then on).
	MaxStrings = 1 << 16
	// MaxLen is the longest string a Table holds; a longer one is kept as
	// it is.
	MaxLen = 1 << 10
)

// Table is a bounded string table. The zero value is empty and ready; a
// Table is not safe for concurrent use.
type Table struct {
	m map[string]string
}

// Of returns the table's copy of s, adding s when it has none.
func (t *Table) Of(s string) string {
	if s == "" || len(s) > MaxLen {
		return s
	}
	if v, ok := t.m[s]; ok {
		return v
	}
	if t.m == nil || len(t.m) >= MaxStrings {
		t.m = make(map[string]string, 1024)
	}
	t.m[s] = s
	return s
}

// Len returns the number of strings the table holds.
func (t *Table) Len() int { return len(t.m) }
