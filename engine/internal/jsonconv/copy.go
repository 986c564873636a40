package jsonconv

// Copy returns a deep copy of v, a value of the generic JSON form: its
// maps and lists are new at every depth; strings, numbers, bools and any
// other value are shared.
func Copy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = Copy(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = Copy(e)
		}
		return l
	}
	return v
}
