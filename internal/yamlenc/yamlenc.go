package yamlenc

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// indent is yaml.v3's default indentation (yaml.Marshal).
const indent = 4

// MaxSimpleKeyBytes is yaml.v3's limit on a simple key (libyaml's
// yaml_emitter_check_simple_key): a longer key is written as "? key",
// which Append leaves to yaml.v3.
const MaxSimpleKeyBytes = 128

// MaxCheckedKeys is the most keys of one map whose order Append checks
// pair by pair when a key holds a digit (yaml.v3's comparison of digit
// runs is not a total order on every set of strings; where it is not,
// yaml.v3's own output depends on the map's iteration order). A larger
// map with such keys is left to yaml.v3.
const MaxCheckedKeys = 64

// Marshal returns yaml.v3's Marshal of v: Append's output when it takes
// v, else yaml.v3's own.
func Marshal(v any) ([]byte, error) {
	if out, ok := Append(nil, v); ok {
		return out, nil
	}
	return yaml.Marshal(v)
}

// Append appends what yaml.Marshal(v) writes for a map[string]any v to
// dst. ok is false, and dst is returned unchanged, when v or a value in
// it is outside what Append writes with certainty (see the package
// documentation).
func Append(dst []byte, v any) (out []byte, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return dst, false
	}
	if len(m) == 0 {
		return append(dst, "{}\n"...), true
	}
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.buf = dst
	ok = e.mapping(m, 0, false, 0)
	out, e.buf = e.buf, nil
	if !ok {
		return dst, false
	}
	return out, true
}

// encoders keeps encoders, with their key slices, between calls.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

type encoder struct {
	buf []byte
	// keys holds one reusable key slice per depth.
	keys [][]string
}

// next is the indentation of a block collection nested under a mapping
// key at column ind: yaml.v3 aligns it to the next multiple of indent.
func next(ind int) int { return indent * ((ind + indent) / indent) }

func (e *encoder) spaces(n int) {
	for ; n > 0; n-- {
		e.buf = append(e.buf, ' ')
	}
}

// mapping writes a non-empty block mapping with its keys at column ind;
// inline is true when the first key follows "- " on the current line.
func (e *encoder) mapping(m map[string]any, ind int, inline bool, depth int) bool {
	keys, ok := e.sortedKeys(m, depth)
	if !ok {
		return false
	}
	for i, k := range keys {
		if i > 0 || !inline {
			e.spaces(ind)
		}
		if len(k) > MaxSimpleKeyBytes || !e.str(k) {
			return false
		}
		e.buf = append(e.buf, ':')
		if !e.value(m[k], ind, false, depth+1) {
			return false
		}
	}
	return true
}

// sequence writes a non-empty block sequence with its dashes at column
// ind, the first inline as in mapping.
func (e *encoder) sequence(s []any, ind int, inline bool, depth int) bool {
	for i, v := range s {
		if i > 0 || !inline {
			e.spaces(ind)
		}
		e.buf = append(e.buf, '-')
		if !e.value(v, ind, true, depth+1) {
			return false
		}
	}
	return true
}

// nest starts a non-empty mapping or sequence that is the value of a
// mapping key at column ind (item false: on the next line, indented) or
// of a sequence's "-" (item true: inline after it), and returns the
// column and the inline argument of mapping and sequence.
func (e *encoder) nest(ind int, item bool) (int, bool) {
	if item {
		e.buf = append(e.buf, ' ')
		return ind + 2, true
	}
	e.buf = append(e.buf, '\n')
	return next(ind), false
}

// value writes v after a mapping key's ":" (item false) or a sequence's
// "-" (item true) at column ind, and ends its last line.
func (e *encoder) value(v any, ind int, item bool, depth int) bool {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			e.buf = append(e.buf, " {}\n"...)
			return true
		}
		cind, inline := e.nest(ind, item)
		return e.mapping(v, cind, inline, depth)
	case []any:
		if len(v) == 0 {
			e.buf = append(e.buf, " []\n"...)
			return true
		}
		cind, inline := e.nest(ind, item)
		return e.sequence(v, cind, inline, depth)
	}
	if s, ok := v.(string); ok && strings.IndexByte(s, '\n') >= 0 {
		cind := next(ind)
		if item {
			cind = ind + 2
		}
		return e.multiline(s, cind)
	}
	e.buf = append(e.buf, ' ')
	if !e.scalar(v) {
		return false
	}
	e.buf = append(e.buf, '\n')
	return true
}

// multiline writes a value with line feeds as yaml.v3 does: a literal
// block scalar, its lines at column ind, when libyaml allows one (no
// trailing space, no space before a line feed, no character it must
// escape), else double-quoted. It returns false for other line breaks
// (carriage return, NEL, LS, PS), invalid UTF-8 and a leading byte order
// mark.
func (e *encoder) multiline(s string, ind int) bool {
	if !utf8.ValidString(s) || strings.HasPrefix(s, "\ufeff") {
		return false
	}
	special := false
	for i := 0; i < len(s); i += width(s[i]) {
		c := s[i]
		switch {
		case c == '\r' || c == 0xc2 && s[i+1] == 0x85 || c == 0xe2 && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			return false
		case c == '\n' || c == '\t':
		case !printable(s, i):
			special = true
		}
	}
	if special || s[len(s)-1] == ' ' || strings.Contains(s, " \n") {
		e.buf = append(e.buf, ' ')
		e.doubleQuoted(s)
		e.buf = append(e.buf, '\n')
		return true
	}
	e.buf = append(e.buf, " |"...)
	if s[0] == ' ' || s[0] == '\n' {
		e.buf = append(e.buf, '0'+indent)
	}
	// libyaml's chomping indicator: strip without a final line feed,
	// keep with two (or a lone one), clip (none) with one.
	switch {
	case s[len(s)-1] != '\n':
		e.buf = append(e.buf, '-')
	case len(s) == 1 || s[len(s)-2] == '\n':
		e.buf = append(e.buf, '+')
	}
	e.buf = append(e.buf, '\n')
	for line := range strings.SplitSeq(s, "\n") {
		if line != "" {
			e.spaces(ind)
			e.buf = append(e.buf, line...)
		}
		e.buf = append(e.buf, '\n')
	}
	// The loop ends every piece, the one after a final line feed too.
	if s[len(s)-1] == '\n' {
		e.buf = e.buf[:len(e.buf)-1]
	}
	return true
}

// scalar writes a scalar value in yaml.v3's style.
func (e *encoder) scalar(v any) bool {
	switch v := v.(type) {
	case string:
		return e.str(v)
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case float64:
		e.float(v)
	default:
		return false
	}
	return true
}

// float is yaml.v3's floatv: strconv's shortest 'g' form, with YAML's
// names for the infinities and NaN.
func (e *encoder) float(f float64) {
	start := len(e.buf)
	e.buf = strconv.AppendFloat(e.buf, f, 'g', -1, 64)
	switch string(e.buf[start:]) {
	case "+Inf":
		e.buf = append(e.buf[:start], ".inf"...)
	case "-Inf":
		e.buf = append(e.buf[:start], "-.inf"...)
	case "NaN":
		e.buf = append(e.buf[:start], ".nan"...)
	}
}

// scalarInfo is libyaml's analysis of a single-line scalar
// (yaml_emitter_analyze_scalar) as far as the block context needs it.
type scalarInfo struct {
	blockPlain   bool // plain allowed outside flow collections
	singleQuoted bool
}

// str writes s as yaml.v3's stringv and libyaml's style selection write
// it: plain when it reads back as the same string and libyaml allows it,
// else single-quoted when libyaml allows that, else double-quoted. It
// returns false for a string with a line break, invalid UTF-8 or a
// leading byte order mark.
func (e *encoder) str(s string) bool {
	info, ok := analyze(s)
	if !ok {
		return false
	}
	if plainIsString(s) && !isBase60Float(s) && !isOldBool(s) {
		switch {
		case info.blockPlain:
			e.buf = append(e.buf, s...)
			return true
		case info.singleQuoted:
			e.singleQuoted(s)
			return true
		}
	}
	e.doubleQuoted(s)
	return true
}

func (e *encoder) singleQuoted(s string) {
	e.buf = append(e.buf, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			e.buf = append(e.buf, '\'')
		}
		e.buf = append(e.buf, s[i])
	}
	e.buf = append(e.buf, '\'')
}

// doubleQuoted is libyaml's yaml_emitter_write_double_quoted_scalar for
// a single-line string without a leading byte order mark.
func (e *encoder) doubleQuoted(s string) {
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); {
		if printable(s, i) && s[i] != '"' && s[i] != '\\' {
			w := width(s[i])
			e.buf = append(e.buf, s[i:i+w]...)
			i += w
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		e.buf = append(e.buf, '\\')
		if c, ok := shortEscapes[r]; ok {
			e.buf = append(e.buf, c)
			continue
		}
		digits := 8
		switch {
		case r <= 0xff:
			e.buf = append(e.buf, 'x')
			digits = 2
		case r <= 0xffff:
			e.buf = append(e.buf, 'u')
			digits = 4
		default:
			e.buf = append(e.buf, 'U')
		}
		for k := (digits - 1) * 4; k >= 0; k -= 4 {
			e.buf = append(e.buf, "0123456789ABCDEF"[(r>>uint(k))&0x0f])
		}
	}
	e.buf = append(e.buf, '"')
}

// shortEscapes are libyaml's one-letter escapes: the rune, then the
// letter after the backslash.
var shortEscapes = map[rune]byte{
	0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r',
	0x1b: 'e', '"': '"', '\\': '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
}

// width is libyaml's width of the UTF-8 sequence that b starts.
func width(b byte) int {
	switch {
	case b&0x80 == 0:
		return 1
	case b&0xe0 == 0xc0:
		return 2
	case b&0xf0 == 0xe0:
		return 3
	case b&0xf8 == 0xf0:
		return 4
	}
	return 0
}

// printable is libyaml's is_printable at s[i] (valid UTF-8 assumed; the
// line feed it also accepts never reaches it here).
func printable(s string, i int) bool {
	b := s[i]
	switch {
	case b >= 0x20 && b <= 0x7e:
		return true
	case b == 0xc2:
		return s[i+1] >= 0xa0
	case b > 0xc2 && b < 0xed:
		return true
	case b == 0xed:
		return s[i+1] < 0xa0
	case b == 0xee:
		return true
	case b == 0xef:
		return !(s[i+1] == 0xbb && s[i+2] == 0xbf) && !(s[i+1] == 0xbf && (s[i+2] == 0xbe || s[i+2] == 0xbf))
	}
	return false
}

// analyze is yaml_emitter_analyze_scalar for the block context. ok is
// false for what str does not write (see there).
func analyze(s string) (info scalarInfo, ok bool) {
	if s == "" {
		// Empty: yaml.v3 double-quotes it (it reads back as null).
		return scalarInfo{blockPlain: true, singleQuoted: true}, true
	}
	if !utf8.ValidString(s) || len(s) >= 3 && s[:3] == "\xef\xbb\xbf" {
		return info, false
	}
	blockIndicators := len(s) >= 3 && (s[:3] == "---" || s[:3] == "...")
	special, tabs := false, false
	precededByWhitespace := true
	for i, w := 0, 0; i < len(s); i += w {
		c := s[i]
		w = width(c)
		followedByWhitespace := i+w >= len(s) || s[i+w] == ' ' || s[i+w] == '\t'
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockIndicators = true
			case '?', ':', '-':
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
		switch {
		case c == '\r' || c == '\n' || c == 0xc2 && s[i+1] == 0x85 || c == 0xe2 && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			return info, false // line breaks: literal style, left to yaml.v3
		case c == '\t':
			tabs = true
		case !printable(s, i):
			special = true
		}
		// libyaml's is_blankz: space, tab, a break or NUL.
		precededByWhitespace = c == ' ' || c == '\t' || c == 0
	}
	leadingSpace, trailingSpace := s[0] == ' ', s[len(s)-1] == ' '
	info.singleQuoted = !tabs && !special
	info.blockPlain = info.singleQuoted && !leadingSpace && !trailingSpace && !blockIndicators
	return info, true
}

// sortedKeys returns m's keys in yaml.v3's order (its keyList.Less), or
// false when that order is not certain (see MaxCheckedKeys).
func (e *encoder) sortedKeys(m map[string]any, depth int) ([]string, bool) {
	for len(e.keys) <= depth {
		e.keys = append(e.keys, nil)
	}
	keys := e.keys[depth][:0]
	digits := false
	for k := range m {
		keys = append(keys, k)
		if !digits {
			for i := 0; i < len(k); i++ {
				if c := k[i]; c >= '0' && c <= '9' || c >= 0x80 {
					digits = true // non-ASCII may hold Unicode digits
					break
				}
			}
		}
	}
	e.keys[depth] = keys
	slices.SortFunc(keys, CompareKeys)
	if !digits {
		// Without digits keyLess orders runes as (letter, code point):
		// a total order.
		return keys, true
	}
	if len(keys) > MaxCheckedKeys {
		return nil, false
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if !keyLess(keys[i], keys[j]) || keyLess(keys[j], keys[i]) {
				return nil, false
			}
		}
	}
	return keys, true
}

// CompareKeys orders two mapping keys as yaml.v3's encoder does (its
// keyList.Less), for slices.SortFunc: -1 when a comes first, 1 when b
// does, 0 when neither does.
func CompareKeys(a, b string) int {
	switch {
	case keyLess(a, b):
		return -1
	case keyLess(b, a):
		return 1
	}
	return 0
}

// keyLess is yaml.v3's keyList.Less for two strings: other characters
// before letters, runs of digits compared as numbers.
func keyLess(a, b string) bool {
	if ascii(a) && ascii(b) {
		return keyLessRunes(a, b, func(s string, i int) rune { return rune(s[i]) }, len(a), len(b))
	}
	ar, br := []rune(a), []rune(b)
	return keyLessRunes(ar, br, func(s []rune, i int) rune { return s[i] }, len(ar), len(br))
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func keyLessRunes[S any](ar, br S, at func(S, int) rune, na, nb int) bool {
	digits := false
	for i := 0; i < na && i < nb; i++ {
		ai, bi := at(ar, i), at(br, i)
		if ai == bi {
			digits = unicode.IsDigit(ai)
			continue
		}
		al := unicode.IsLetter(ai)
		bl := unicode.IsLetter(bi)
		if al && bl {
			return ai < bi
		}
		if al || bl {
			if digits {
				return al
			}
			return bl
		}
		var aj, bj int
		var an, bn int64
		if ai == '0' || bi == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(at(ar, j)); j-- {
				if at(ar, j) != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for aj = i; aj < na && unicode.IsDigit(at(ar, aj)); aj++ {
			an = an*10 + int64(at(ar, aj)-'0')
		}
		for bj = i; bj < nb && unicode.IsDigit(at(br, bj)); bj++ {
			bn = bn*10 + int64(at(br, bj)-'0')
		}
		if an != bn {
			return an < bn
		}
		if aj != bj {
			return aj < bj
		}
		return ai < bi
	}
	return na < nb
}
