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

// Strings returns in as a list of the generic JSON form (a new []any of
// its strings).
func Strings(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}
