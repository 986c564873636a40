package variables

// SetPath returns a copy of root with value at path (the rest of a
// dotted variable name such as "cm.data.key", split at its dots, under
// the value of its first part): the maps on the way are copied, never
// changed in place, and one that is missing or not a map becomes a map.
func SetPath(root any, path []string, value any) any {
	if len(path) == 0 {
		return value
	}
	m, _ := root.(map[string]any)
	cp := make(map[string]any, len(m)+1)
	for k, v := range m {
		cp[k] = v
	}
	cp[path[0]] = SetPath(m[path[0]], path[1:], value)
	return cp
}
