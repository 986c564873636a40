package server

import (
	"bytes"
	"slices"
	"strings"

	"github.com/verdict-policy/verdict/internal/yamlenc"
)

// encodeFailures writes the policy → rule → message map of a blocked
// request exactly as yaml.v3's encoder (indent 2) writes it, for the
// common case: single-line printable ASCII names and messages that yaml
// writes plain or single-quoted. ok is false for anything else (line
// breaks, tabs, non-ASCII, text yaml would read as another type, long
// keys); the caller then uses yaml.v3 itself. For two policies it takes
// about 1.5 µs where yaml.v3 takes 16 µs (BenchmarkBlockedMessage,
// docs/benchmarks.md).
func encodeFailures(failures map[string]map[string]string) (out []byte, ok bool) {
	var buf bytes.Buffer
	for _, policy := range sortedYAMLKeys(failures) {
		if !writeScalar(&buf, policy, true) {
			return nil, false
		}
		buf.WriteString(":\n")
		rules := failures[policy]
		for _, rule := range sortedYAMLKeys(rules) {
			buf.WriteString("  ")
			if !writeScalar(&buf, rule, true) {
				return nil, false
			}
			buf.WriteString(": ")
			if !writeScalar(&buf, rules[rule], false) {
				return nil, false
			}
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes(), true
}

func sortedYAMLKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, yamlenc.CompareKeys)
	return keys
}

// writeScalar writes s in the style yaml.v3 picks in block context: plain
// when the text reads back as the same string and no indicator forbids
// it, else single-quoted. It returns false for text outside the fast
// path (see encodeFailures).
func writeScalar(buf *bytes.Buffer, s string, key bool) bool {
	if s == "" || key && len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false // line breaks, tabs, control and non-ASCII characters
		}
	}
	switch s[0] {
	case '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return false // numbers, timestamps, base-60 floats: let yaml decide
	}
	switch s {
	case "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false // yaml double-quotes these
	}
	if plainAllowed(s) {
		buf.WriteString(s)
		return true
	}
	buf.WriteByte('\'')
	buf.WriteString(strings.ReplaceAll(s, "'", "''"))
	buf.WriteByte('\'')
	return true
}

// plainAllowed is libyaml's analysis of a single-line printable ASCII
// scalar (yaml_emitter_analyze_scalar) for the block context: no leading
// or trailing space, and no block indicator.
func plainAllowed(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if len(s) >= 3 && (s[:3] == "---" || s[:3] == "...") {
		return false
	}
	followedBySpace := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', ':', '-':
		if followedBySpace(0) {
			return false
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if followedBySpace(i) {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}
