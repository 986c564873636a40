package variables

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pointer is a path split in elements, as Kyverno's jsonpointer.Pointer; it
// turns the path of a {{@}} into the JMESPath Kyverno queries.
type pointer []string

// parsePointer is Kyverno's jsonpointer.ParsePath: "/" separates elements, a
// backslash escapes the next character, double quotes are dropped and
// protect a "/" between them.
func parsePointer(raw string) pointer {
	var p pointer
	var sb strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			p = append(p, sb.String())
		}
		sb.Reset()
	}
	var escaped, quoted bool
	for i, width := 0, 0; i <= len(raw); i += width {
		var r rune
		r, width = utf8.DecodeRuneInString(raw[i:])
		if r == utf8.RuneError && width == 1 {
			// Kyverno stops at invalid UTF-8 and drops the element in progress.
			return p
		}
		switch {
		case escaped: // at the end of the string, r is U+FFFD, as in Kyverno
			sb.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			quoted = !quoted
		case r == '/' && !quoted:
			flush()
		case r == utf8.RuneError: // end of the string
			flush()
			return p
		default:
			sb.WriteRune(r)
		}
	}
	return p
}

func (p pointer) skipPast(s string) pointer {
	return p[slices.Index(p, s)+1:]
}

func (p pointer) skipN(n int) pointer {
	if n > len(p)-1 {
		return nil
	}
	return p[n:]
}

// jmesPath is Kyverno's Pointer.JMESPath: numbers become indexes, plain
// identifiers stay as they are, anything else is quoted.
func (p pointer) jmesPath() string {
	var sb strings.Builder
	for _, c := range p {
		if _, err := strconv.ParseUint(c, 10, 64); err == nil {
			sb.WriteByte('[')
			sb.WriteString(c)
			sb.WriteByte(']')
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		if first, _ := utf8.DecodeRuneInString(c); isIdentFirst(first) && strings.IndexFunc(c, notIdent) == -1 {
			sb.WriteString(c)
			continue
		}
		sb.WriteByte('"')
		for _, r := range c {
			switch {
			case r == 0x20 || r == 0x21 || r >= 0x23 && r <= 0x5B || r >= 0x5D:
				sb.WriteRune(r)
			case r == '"':
				sb.WriteString(`\"`)
			case r == '\\':
				sb.WriteString(`\\`)
			case r == '\b':
				sb.WriteString(`\b`)
			case r == '\f':
				sb.WriteString(`\f`)
			case r == '\n':
				sb.WriteString(`\n`)
			case r == '\r':
				sb.WriteString(`\r`)
			case r == '\t':
				sb.WriteString(`\t`)
			default:
				fmt.Fprintf(&sb, "\\u%04x", r&0xffff)
			}
		}
		sb.WriteByte('"')
	}
	return sb.String()
}

// isIdentFirst: Kyverno lets an unquoted element start with a letter, "_" or
// "(" (for anchors).
func isIdentFirst(r rune) bool {
	return r == '(' || r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
}

// notIdent: Kyverno's unquoted elements hold letters, digits, "_" and ")".
func notIdent(r rune) bool {
	return !(r == ')' || r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
}

func itoa(i int) string { return strconv.Itoa(i) }
