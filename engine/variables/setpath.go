package variables

import (
	"encoding/csv"
	"fmt"
	"strings"
)

// SplitName splits a dotted variable name ("request.operation",
// `request.object.metadata.annotations."example.com/team"`) into its
// keys as Kyverno's context.AddVariable does: as one line of CSV with "."
// as the separator, so that a key in double quotes may hold dots (and ""
// for a quote). An empty name, a quote inside an unquoted key and an
// unterminated quote are errors, Kyverno's "failed to add variable to
// context"; as in Kyverno, only the first line of a name counts.
func SplitName(name string) ([]string, error) {
	if !strings.Contains(name, `"`) && !strings.ContainsAny(name, "\r\n") && name != "" {
		return strings.Split(name, "."), nil
	}
	r := csv.NewReader(strings.NewReader(name))
	r.Comma = '.'
	keys, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("variable name %q: %w", name, err)
	}
	return keys, nil
}

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
