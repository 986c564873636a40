package kyvernotest

import (
	"bufio"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/verdict-policy/verdict/internal/yamlenc"
)

// This file writes YAML scalars byte for byte as go-yaml v2's Marshal
// (go.yaml.in/yaml/v2, through sigs.k8s.io/yaml, which Kyverno's CLI
// prints its reports with) writes a string in a block mapping: its choice
// of style (encode.go stringv, emitterc.go yaml_emitter_select_scalar_style
// and yaml_emitter_analyze_scalar), its folding of long plain and quoted
// scalars on spaces past yamlBestWidth, and its escapes
// (yaml_emitter_write_*_scalar). It is a port of those functions for one
// scalar at a time, so that the report writer stays a streaming writer.

// yamlBestWidth is go-yaml v2's default line width: a plain or quoted
// scalar is folded at the first space after this column.
const yamlBestWidth = 80

// yamlMaxSimpleKey is the longest key, in bytes, go-yaml v2 writes as a
// simple key ("key: value"); a longer one, or one with a line break, is
// written as a complex key ("? key\n: value").
const yamlMaxSimpleKey = 128

type yamlStyle uint8

const (
	yamlPlain yamlStyle = iota
	yamlSingle
	yamlDouble
	yamlLiteral
)

// yamlEmitter is the part of go-yaml v2's emitter state a scalar's writing
// reads and changes.
type yamlEmitter struct {
	w          *bufio.Writer
	column     int // in characters, as go-yaml counts it
	indent     int // indentation of a continuation line
	whitespace bool
	indention  bool
}

// writeYAMLKV writes "key: value\n" as go-yaml v2 writes an entry of a
// block mapping whose keys are at column col (the key itself already
// preceded by prefix, col characters: indentation and "- ").
func writeYAMLKV(w *bufio.Writer, prefix string, col int, key, value string) {
	w.WriteString(prefix)
	e := yamlEmitter{w: w, column: col, indent: col, whitespace: true, indention: true}
	e.key(key)
	e.value(value, col)
}

// key writes a mapping key and its ':' indicator, as a simple key or, when
// go-yaml would not write it as one, a complex key ("? key" then ":" on
// the next line at the key's column).
func (e *yamlEmitter) key(k string) {
	if len(k) <= yamlMaxSimpleKey && yamlIsIdent(k) && yamlCanPlain(k) {
		e.w.WriteString(k)
		e.w.WriteByte(':')
		e.column += len(k) + 1
		e.whitespace = false
		e.indention = false
		return
	}
	k = jsonValidUTF8(k)
	a := yamlAnalyze(k)
	col := e.column
	if !a.multiline && len(k) <= yamlMaxSimpleKey {
		style := yamlSelectStyle(k, a, true)
		e.indent = col + 2
		e.scalar(k, a, style, false)
		e.w.WriteByte(':')
		e.column++
		e.whitespace = false
		e.indention = false
		return
	}
	// Complex key: "?" at the key's column, the key as a node in block
	// context, then ":" on a new line at the key's column.
	e.w.WriteByte('?')
	e.column++
	e.whitespace = false
	e.indention = true
	e.indent = col + 2
	e.scalar(k, a, yamlSelectStyle(k, a, false), true)
	e.indent = col
	e.writeIndent()
	e.w.WriteByte(':')
	e.column++
	e.whitespace = false
	e.indention = false
}

// value writes a mapping value after its key's ':' (the key at column
// col), and ends the line.
func (e *yamlEmitter) value(v string, col int) {
	e.indent = col + 2
	if yamlIsIdent(v) && yamlCanPlain(v) {
		// The common case: a word that needs no quotes (and, with no
		// spaces, no folding).
		e.w.WriteByte(' ')
		e.w.WriteString(v)
		e.w.WriteByte('\n')
		return
	}
	v = jsonValidUTF8(v)
	a := yamlAnalyze(v)
	style := yamlSelectStyle(v, a, false)
	e.scalar(v, a, style, true)
	if style == yamlLiteral && e.column == 0 {
		return // the literal ended with its line break
	}
	e.w.WriteByte('\n')
}

// yamlIsIdent reports whether s is non-empty and only ASCII letters,
// digits, '-', '_', '.' and '/', not starting with '-' or '.': such a
// string is written as it is wherever it is plain.
func yamlIsIdent(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// jsonValidUTF8 replaces each byte of s that is not part of valid UTF-8
// with U+FFFD, as encoding/json does (Kyverno's report goes through JSON
// before it is YAML).
func jsonValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// yamlOrdinary are the bytes yamlAnalyze has nothing to note about past
// a scalar's first character: printable ASCII but space, ':', '#'.
var yamlOrdinary = func() (t [256]bool) {
	for c := 0x21; c <= 0x7E; c++ {
		t[c] = c != ':' && c != '#'
	}
	return t
}()

// runEnd is the end of the run of v from i that the plain and
// single-quoted writers copy as it is: up to a quote (when quote), a byte
// that may start a line break, or a space past the best width, where the
// scalar may be folded.
func (e *yamlEmitter) runEnd(v string, i int, quote bool) int {
	last := i + yamlBestWidth - e.column // spaces up to here cannot fold
	for j := i; j < len(v); j++ {
		switch v[j] {
		case ' ':
			if j > last {
				return j
			}
		case '\r', '\n', 0xC2, 0xE2:
			return j
		case '\'':
			if quote {
				return j
			}
		}
	}
	return len(v)
}

// writeRun copies v[i:j], characters that are no line breaks, and
// returns j and whether the last was a space.
func (e *yamlEmitter) writeRun(v string, i, j int) (int, bool) {
	e.w.WriteString(v[i:j])
	for k := i; k < j; k++ {
		if v[k]&0xC0 != 0x80 {
			e.column++
		}
	}
	return j, v[j-1] == ' '
}

// yamlScalarAnalysis is go-yaml v2's scalar_data.
type yamlScalarAnalysis struct {
	multiline, blockPlain, singleQuoted, block bool
}

// yamlAnalyze is go-yaml v2's yaml_emitter_analyze_scalar (flow
// indicators are left out: the writer writes no flow collections).
func yamlAnalyze(v string) yamlScalarAnalysis {
	if v == "" {
		return yamlScalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	var blockIndicators, lineBreaks, special, leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak, previousSpace, previousBreak bool
	if strings.HasPrefix(v, "---") || strings.HasPrefix(v, "...") {
		blockIndicators = true
	}
	precededByWhitespace := true
	for i, w := 0, 0; i < len(v); i += w {
		if i > 0 && yamlOrdinary[v[i]] {
			// A printable ASCII character that is no indicator, space or
			// line break: only what follows it changes.
			w = 1
			previousSpace, previousBreak, precededByWhitespace = false, false, false
			continue
		}
		w = yamlWidth(v[i])
		followedByWhitespace := i+w >= len(v) || v[i+w] == ' ' || v[i+w] == '\t'
		c := v[i]
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockIndicators = true
			case '?', ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '-':
				if followedByWhitespace {
					blockIndicators = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '#':
				if precededByWhitespace {
					blockIndicators = true
				}
			}
		}
		if !yamlPrintable(v, i) {
			special = true
		}
		if c == ' ' {
			if i == 0 {
				leadingSpace = true
			}
			if i+1 == len(v) {
				trailingSpace = true
			}
			if previousBreak {
				breakSpace = true
			}
			previousSpace, previousBreak = true, false
		} else if yamlIsBreak(v, i) {
			lineBreaks = true
			if i == 0 {
				leadingBreak = true
			}
			if i+w == len(v) {
				trailingBreak = true
			}
			if previousSpace {
				spaceBreak = true
			}
			previousSpace, previousBreak = false, true
		} else {
			previousSpace, previousBreak = false, false
		}
		precededByWhitespace = c == ' ' || c == '\t' || c == 0 || yamlIsBreak(v, i)
	}
	a := yamlScalarAnalysis{multiline: lineBreaks, blockPlain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.blockPlain = false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace {
		a.blockPlain = false
		a.singleQuoted = false
	}
	if spaceBreak || special {
		a.blockPlain, a.singleQuoted, a.block = false, false, false
	}
	if lineBreaks || blockIndicators {
		a.blockPlain = false
	}
	return a
}

// yamlSelectStyle is go-yaml v2's choice of a string's style: encode.go's
// stringv (literal with a "\n", plain unless it would read as another
// type, double-quoted otherwise) then yaml_emitter_select_scalar_style in
// block context.
func yamlSelectStyle(v string, a yamlScalarAnalysis, simpleKey bool) yamlStyle {
	var style yamlStyle
	switch {
	case strings.Contains(v, "\n"):
		style = yamlLiteral
	case yamlCanPlain(v):
		style = yamlPlain
	default:
		style = yamlDouble
	}
	if simpleKey && a.multiline {
		style = yamlDouble
	}
	if style == yamlPlain {
		if !a.blockPlain || v == "" && simpleKey {
			style = yamlSingle
		}
	}
	if style == yamlSingle && !a.singleQuoted {
		style = yamlDouble
	}
	if style == yamlLiteral && (!a.block || simpleKey) {
		style = yamlDouble
	}
	return style
}

// scalar writes v in the given style, go-yaml v2's
// yaml_emitter_process_scalar.
func (e *yamlEmitter) scalar(v string, a yamlScalarAnalysis, style yamlStyle, allowBreaks bool) {
	switch style {
	case yamlPlain:
		e.plain(v, a.multiline, allowBreaks)
	case yamlSingle:
		e.singleQuoted(v, a.multiline, allowBreaks)
	case yamlDouble:
		e.doubleQuoted(v, allowBreaks)
	case yamlLiteral:
		e.literal(v)
	}
}

func (e *yamlEmitter) put(c byte) {
	e.w.WriteByte(c)
	e.column++
}

// write copies one character of v at i and returns its width.
func (e *yamlEmitter) write(v string, i int) int {
	w := yamlWidth(v[i])
	e.w.WriteString(v[i : i+w])
	e.column++
	return w
}

func (e *yamlEmitter) putBreak() {
	e.w.WriteByte('\n')
	e.column = 0
}

// writeBreak copies the line break of v at i and returns its width.
func (e *yamlEmitter) writeBreak(v string, i int) int {
	if v[i] == '\n' {
		e.putBreak()
		return 1
	}
	w := e.write(v, i)
	e.column = 0
	return w
}

// writeIndent is yaml_emitter_write_indent.
func (e *yamlEmitter) writeIndent() {
	if !e.indention || e.column > e.indent || e.column == e.indent && !e.whitespace {
		e.putBreak()
	}
	for e.column < e.indent {
		e.put(' ')
	}
	e.whitespace = true
	e.indention = true
}

// indicator is yaml_emitter_write_indicator for a one-character
// indicator.
func (e *yamlEmitter) indicator(c byte, needWhitespace bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.put(c)
	e.whitespace = false
	e.indention = false
}

// fits reports whether v, written from the current column, cannot reach
// a space past the best width, so that it is not folded.
func (e *yamlEmitter) fits(v string) bool {
	return e.column+len(v) <= yamlBestWidth+1
}

func (e *yamlEmitter) plain(v string, multiline, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	if !allowBreaks || e.fits(v) {
		if !multiline {
			e.w.WriteString(v)
			e.column += utf8.RuneCountInString(v)
			e.whitespace, e.indention = false, false
			return
		}
	}
	spaces, breaks := false, false
	for i := 0; i < len(v); {
		switch {
		case v[i] == ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && !(i+1 < len(v) && v[i+1] == ' ') {
				e.writeIndent()
				i++
			} else {
				i += e.write(v, i)
			}
			spaces = true
		case yamlIsBreak(v, i):
			if !breaks && v[i] == '\n' {
				e.putBreak()
			}
			i += e.writeBreak(v, i)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			spaces = false
			if j := e.runEnd(v, i, false); j > i {
				i, spaces = e.writeRun(v, i, j)
			} else {
				i += e.write(v, i)
			}
			e.indention = false
			breaks = false
		}
	}
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) singleQuoted(v string, multiline, allowBreaks bool) {
	e.indicator('\'', true)
	if (!allowBreaks || e.fits(v)) && !multiline && strings.IndexByte(v, '\'') < 0 {
		e.w.WriteString(v)
		e.column += utf8.RuneCountInString(v)
	} else {
		spaces, breaks := false, false
		for i := 0; i < len(v); {
			switch {
			case v[i] == ' ':
				if allowBreaks && !spaces && e.column > yamlBestWidth && i > 0 && i < len(v)-1 && v[i+1] != ' ' {
					e.writeIndent()
					i++
				} else {
					i += e.write(v, i)
				}
				spaces = true
			case yamlIsBreak(v, i):
				if !breaks && v[i] == '\n' {
					e.putBreak()
				}
				i += e.writeBreak(v, i)
				e.indention = true
				breaks = true
			default:
				if breaks {
					e.writeIndent()
				}
				if v[i] == '\'' {
					e.put('\'')
				}
				spaces = false
				if j := e.runEnd(v, i, true); j > i {
					i, spaces = e.writeRun(v, i, j)
				} else {
					i += e.write(v, i)
				}
				e.indention = false
				breaks = false
			}
		}
	}
	e.indicator('\'', false)
}

func (e *yamlEmitter) doubleQuoted(v string, allowBreaks bool) {
	e.indicator('"', true)
	bom := strings.HasPrefix(v, "\ufeff")
	spaces := false
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case bom || !yamlPrintable(v, i) || yamlIsBreak(v, i) || c == '"' || c == '\\':
			r, w := utf8.DecodeRuneInString(v[i:])
			i += w
			e.put('\\')
			switch r {
			case 0x00:
				e.put('0')
			case 0x07:
				e.put('a')
			case 0x08:
				e.put('b')
			case 0x09:
				e.put('t')
			case 0x0A:
				e.put('n')
			case 0x0b:
				e.put('v')
			case 0x0c:
				e.put('f')
			case 0x0d:
				e.put('r')
			case 0x1b:
				e.put('e')
			case 0x22:
				e.put('"')
			case 0x5c:
				e.put('\\')
			case 0x85:
				e.put('N')
			case 0xA0:
				e.put('_')
			case 0x2028:
				e.put('L')
			case 0x2029:
				e.put('P')
			default:
				var digits int
				switch {
				case r <= 0xFF:
					e.put('x')
					digits = 2
				case r <= 0xFFFF:
					e.put('u')
					digits = 4
				default:
					e.put('U')
					digits = 8
				}
				for k := (digits - 1) * 4; k >= 0; k -= 4 {
					e.put("0123456789ABCDEF"[(r>>uint(k))&0x0F])
				}
			}
			spaces = false
		case c == ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && i > 0 && i < len(v)-1 {
				e.writeIndent()
				if v[i+1] == ' ' {
					e.put('\\')
				}
				i++
			} else {
				i += e.write(v, i)
			}
			spaces = true
		default:
			i += e.write(v, i)
			spaces = false
		}
	}
	e.indicator('"', false)
}

// literal is yaml_emitter_write_literal_scalar with its block scalar
// hints.
func (e *yamlEmitter) literal(v string) {
	e.indicator('|', true)
	if v[0] == ' ' || yamlIsBreak(v, 0) {
		e.indicator('2', false) // go-yaml's best indent
	}
	i := len(v) - 1
	for v[i]&0xC0 == 0x80 {
		i--
	}
	switch {
	case !yamlIsBreak(v, i):
		e.indicator('-', false)
	case i == 0:
		e.indicator('+', false)
	default:
		i--
		for v[i]&0xC0 == 0x80 {
			i--
		}
		if yamlIsBreak(v, i) {
			e.indicator('+', false)
		}
	}
	e.putBreak()
	e.indention = true
	e.whitespace = true
	breaks := true
	for i := 0; i < len(v); {
		if yamlIsBreak(v, i) {
			i += e.writeBreak(v, i)
			e.indention = true
			breaks = true
		} else {
			if breaks {
				e.writeIndent()
			}
			i += e.write(v, i)
			e.indention = false
			breaks = false
		}
	}
}

func yamlWidth(b byte) int {
	switch {
	case b&0x80 == 0:
		return 1
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 1 // not reached for valid UTF-8
}

// yamlByte is v[i], or 0 past its end (go-yaml's buffers end in NULs).
func yamlByte(v string, i int) byte {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// yamlPrintable is go-yaml v2's is_printable (with its unicode option on):
// no control characters but '\n', no 4-byte characters, no U+FEFF,
// U+FFFE, U+FFFF, U+0080 to U+009F.
func yamlPrintable(v string, i int) bool {
	b := v[i]
	b1, b2 := yamlByte(v, i+1), yamlByte(v, i+2)
	return b == 0x0A ||
		b >= 0x20 && b <= 0x7E ||
		b == 0xC2 && b1 >= 0xA0 ||
		b > 0xC2 && b < 0xED ||
		b == 0xED && b1 < 0xA0 ||
		b == 0xEE ||
		b == 0xEF && !(b1 == 0xBB && b2 == 0xBF) && !(b1 == 0xBF && (b2 == 0xBE || b2 == 0xBF))
}

// yamlIsBreak is go-yaml v2's is_break: CR, LF, NEL, LS, PS.
func yamlIsBreak(v string, i int) bool {
	b := v[i]
	return b == '\r' || b == '\n' ||
		b == 0xC2 && yamlByte(v, i+1) == 0x85 ||
		b == 0xE2 && yamlByte(v, i+1) == 0x80 && (yamlByte(v, i+2) == 0xA8 || yamlByte(v, i+2) == 0xA9)
}

// yamlBase60Float is go-yaml v2's base60float: YAML 1.1 sexagesimal
// numbers, which it quotes.
var yamlBase60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// yamlStyleFloat is go-yaml v2's yamlStyleFloat.
var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yamlCanPlain reports whether go-yaml v2 would write s plain: read back
// plain, it resolves to a string (not a boolean, null, number or
// timestamp in YAML 1.1 as go-yaml v2 resolves them), and it is not a
// sexagesimal number (resolve.go's resolve and encode.go's stringv).
func yamlCanPlain(s string) bool {
	if s == "" {
		return false // null
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
	case c == '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		switch s {
		case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
			"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
			"~", "null", "Null", "NULL":
			return false
		}
		return true
	default:
		return true
	}
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return false
	}
	if yamlenc.IsTimestamp(s) {
		return false
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return false
	}
	if yamlStyleFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return false
		}
	}
	if strings.HasPrefix(plain, "0b") {
		if _, err := strconv.ParseInt(plain[2:], 2, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plain[2:], 2, 64); err == nil {
			return false
		}
	} else if strings.HasPrefix(plain, "-0b") {
		if _, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
			return false
		}
	}
	if strings.IndexByte(s, ':') >= 0 && yamlBase60Float.MatchString(s) {
		return false
	}
	return true
}

// yamlKeyLess is the order go-yaml v2 sorts string keys of a mapping in
// (sorter.go's keyList.Less): letters before other characters, runs of
// digits compared as numbers.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al := unicode.IsLetter(ar[i])
		bl := unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlKeyCompare is yamlKeyLess as a comparison for slices.SortFunc.
func yamlKeyCompare(a, b string) int {
	switch {
	case yamlKeyLess(a, b):
		return -1
	case yamlKeyLess(b, a):
		return 1
	}
	return 0
}
