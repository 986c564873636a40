package kyverno

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastParser parses the block-style subset of YAML that Kubernetes manifests
// are written in, straight into JSON values (map[string]any, []any, string,
// float64, bool, nil), several times faster than go-yaml.
//
// It never guesses: on anything outside the subset it knows (anchors, tags,
// multi-line plain or quoted scalars, tabs, CR line ends, keys that are not
// strings, NaN, …) it gives up and the caller parses the document with go-yaml
// v2, the parser Kubernetes and Kyverno use. The subset it accepts must decode
// exactly as go-yaml v2 + sigs.k8s.io/yaml would: FuzzFastYAML checks it.
type fastParser struct {
	src   string
	lines []fastLine
	// dupKeys makes a repeated mapping key a reason to give up (the slow,
	// strict parser then reports it); otherwise the last value wins, as in
	// go-yaml's non-strict mode.
	dupKeys bool
	keys    map[string]string // interned keys
}

type fastLine struct {
	start, end int // offsets of the line in src, without the '\n'
	indent     int // leading spaces
	blank      bool
}

// maxFastDepth bounds the nesting the fast parser follows (recursion depth);
// deeper documents go to go-yaml, which has its own limits.
const maxFastDepth = 200

// maxSimpleKey is below libyaml's limit of 1024 characters from the start of
// a key to its ':'.
const maxSimpleKey = 1000

// fastYAML holds what the fast parser reuses from one document to the next.
type fastYAML struct {
	keys  map[string]string // interned mapping keys
	lines []fastLine
}

// parse parses one document (without its "---" separator lines). ok is false
// when the document is outside the fast subset. With dupKeys, a repeated
// mapping key is outside the subset too. Scalars of the result share src's
// memory.
func (f *fastYAML) parse(src string, dupKeys bool) (v any, ok bool) {
	p := &fastParser{src: src, dupKeys: dupKeys, keys: f.keys, lines: f.lines[:0]}
	defer func() { f.lines = p.lines[:0] }()
	if !p.splitLines() {
		return nil, false
	}
	li := p.nextContent(0)
	if li == len(p.lines) {
		return nil, true // an empty document is null
	}
	v, next, ok := p.node(li, p.lines[li].indent, -1, 0)
	if !ok || p.nextContent(next) != len(p.lines) {
		return nil, false
	}
	return v, true
}

// splitLines cuts src into lines. It gives up on characters outside the
// fast subset (it takes printable ASCII, '\n', and printable non-ASCII runes
// that are not YAML line breaks or byte order marks), on directives and on
// document markers.
func (p *fastParser) splitLines() bool {
	src := p.src
	start := 0
	for i := 0; i <= len(src); i++ {
		if i < len(src) {
			c := src[i]
			if c >= 0x20 && c < 0x7f {
				continue
			}
			if c != '\n' {
				if c < utf8.RuneSelf {
					return false
				}
				r, size := utf8.DecodeRuneInString(src[i:])
				switch {
				case r == utf8.RuneError && size <= 1:
					return false
				case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
					return false
				}
				i += size - 1
				continue
			}
		}
		// A line ends at i.
		indent := 0
		for start+indent < i && src[start+indent] == ' ' {
			indent++
		}
		rest := start + indent
		blank := rest == i || src[rest] == '#'
		if indent == 0 && !blank {
			// Directives and document markers.
			if src[start] == '%' || (i-start >= 3 && (src[start:start+3] == "..." || src[start:start+3] == "---")) {
				return false
			}
		}
		p.lines = append(p.lines, fastLine{start: start, end: i, indent: indent, blank: blank})
		start = i + 1
	}
	return true
}

// nextContent returns the index of the first non-blank line at or after li.
func (p *fastParser) nextContent(li int) int {
	for li < len(p.lines) && p.lines[li].blank {
		li++
	}
	return li
}

// at returns the byte at column col of line li, or 0 past its end.
func (p *fastParser) at(li, col int) byte {
	l := p.lines[li]
	if l.start+col < l.end {
		return p.src[l.start+col]
	}
	return 0
}

// blankAt reports whether column col of line li is a space or the line end.
func (p *fastParser) blankAt(li, col int) bool {
	c := p.at(li, col)
	return c == ' ' || c == 0
}

// restBlank reports whether, from column col, line li holds only spaces and
// possibly a comment that starts after a space (or at col itself when
// commentAtCol is true).
func (p *fastParser) restBlank(li, col int, commentAtCol bool) bool {
	l := p.lines[li]
	i := l.start + col
	sawSpace := commentAtCol
	for ; i < l.end; i++ {
		switch p.src[i] {
		case ' ':
			sawSpace = true
		case '#':
			return sawSpace
		default:
			return false
		}
	}
	return true
}

// node parses the node that starts at line li, column col. Later lines of a
// block collection that starts here are at indentation col. parent is the
// indentation of the enclosing block collection: a scalar must not continue
// on a later line indented more than parent. It returns the value and the
// index of the line after the node.
func (p *fastParser) node(li, col, parent, depth int) (any, int, bool) {
	if depth > maxFastDepth {
		return nil, 0, false
	}
	switch c := p.at(li, col); c {
	case '-':
		if p.blankAt(li, col+1) {
			return p.sequence(li, col, depth)
		}
	case '|', '>':
		return p.blockScalar(li, col, parent)
	case '[', '{':
		v, end, ok := p.flow(li, col, depth)
		if !ok || !p.restBlank(li, end, false) {
			return nil, 0, false
		}
		return p.endScalar(v, li, parent)
	}
	if _, _, isKey, ok := p.key(li, col); !ok {
		return nil, 0, false
	} else if isKey {
		return p.mapping(li, col, depth)
	}
	v, ok := p.inlineScalar(li, col)
	if !ok {
		return nil, 0, false
	}
	return p.endScalar(v, li, parent)
}

// endScalar checks that no line after the single-line scalar on line li
// continues it, and returns the index of the next line.
func (p *fastParser) endScalar(v any, li, parent int) (any, int, bool) {
	next := p.nextContent(li + 1)
	if next < len(p.lines) && p.lines[next].indent > parent {
		return nil, 0, false
	}
	return v, li + 1, true
}

// key parses a mapping key at line li, column col. isKey is false when the
// text there is not a key (a scalar), and ok false when it is outside the
// fast subset. valueCol is the column after the ':'.
func (p *fastParser) key(li, col int) (key string, valueCol int, isKey, ok bool) {
	l := p.lines[li]
	switch c := p.at(li, col); c {
	case '"', '\'':
		s, end, ok := p.quoted(li, col)
		if !ok {
			return "", 0, false, false
		}
		i := end
		for p.at(li, i) == ' ' {
			i++
		}
		if p.at(li, i) != ':' {
			return "", 0, false, true
		}
		if !p.blankAt(li, i+1) || i-col > maxSimpleKey {
			return "", 0, false, false
		}
		return s, i + 1, true, true
	case '[', '{', '?', ':', ',', ']', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', 0, ' ':
		return "", 0, false, false
	case '-':
		if p.blankAt(li, col+1) {
			return "", 0, false, false
		}
	}
	// A plain scalar: it ends at ": ", at ":" before the line end, or at a
	// comment (" #").
	i := l.start + col
	for ; i < l.end; i++ {
		c := p.src[i]
		if c == ':' && (i+1 == l.end || p.src[i+1] == ' ') {
			break
		}
		if c == '#' && p.src[i-1] == ' ' {
			return "", 0, false, true
		}
	}
	if i == l.end {
		return "", 0, false, true
	}
	raw := p.src[l.start+col : i]
	if len(raw) > maxSimpleKey {
		return "", 0, false, false
	}
	j := len(raw)
	for j > 0 && raw[j-1] == ' ' {
		j--
	}
	raw = raw[:j]
	if s, found := p.keys[raw]; found {
		return s, i + 1 - l.start, true, true
	}
	s := raw
	if v, ok := resolvePlain(s); !ok {
		return "", 0, false, false
	} else if _, isString := v.(string); !isString || s == "<<" {
		return "", 0, false, false
	}
	if p.keys != nil {
		p.keys[s] = s
	}
	return s, i + 1 - l.start, true, true
}

// mapping parses a block mapping whose keys are at column col, the first on
// line li.
func (p *fastParser) mapping(li, col, depth int) (any, int, bool) {
	m := make(map[string]any)
	first := true
	for {
		if !first {
			if p.lines[li].indent != col {
				return nil, 0, false
			}
		}
		first = false
		k, vcol, isKey, ok := p.key(li, col)
		if !ok || !isKey {
			return nil, 0, false
		}
		for p.at(li, vcol) == ' ' {
			vcol++
		}
		var v any
		var next int
		if c := p.at(li, vcol); c == 0 || c == '#' {
			next = p.nextContent(li + 1)
			switch {
			case next == len(p.lines):
			case p.lines[next].indent > col:
				v, next, ok = p.node(next, p.lines[next].indent, col, depth+1)
			case p.lines[next].indent == col && p.at(next, col) == '-' && p.blankAt(next, col+1):
				// A sequence may sit at the indentation of its key.
				v, next, ok = p.sequence(next, col, depth+1)
			}
			if !ok {
				return nil, 0, false
			}
		} else {
			switch c {
			case '|', '>':
				v, next, ok = p.blockScalar(li, vcol, col)
			case '[', '{':
				var end int
				v, end, ok = p.flow(li, vcol, depth+1)
				if ok && !p.restBlank(li, end, false) {
					ok = false
				}
				if ok {
					v, next, ok = p.endScalar(v, li, col)
				}
			default:
				v, ok = p.inlineScalar(li, vcol)
				if ok {
					v, next, ok = p.endScalar(v, li, col)
				}
			}
			if !ok {
				return nil, 0, false
			}
		}
		if _, dup := m[k]; dup && p.dupKeys {
			return nil, 0, false
		}
		m[k] = v
		next = p.nextContent(next)
		if next == len(p.lines) || p.lines[next].indent < col {
			return m, next, true
		}
		if p.lines[next].indent > col {
			return nil, 0, false
		}
		li = next
	}
}

// sequence parses a block sequence whose dashes are at column col, the first
// on line li.
func (p *fastParser) sequence(li, col, depth int) (any, int, bool) {
	var s []any
	for {
		if p.at(li, col) != '-' || !p.blankAt(li, col+1) {
			return nil, 0, false
		}
		c2 := col + 1
		for p.at(li, c2) == ' ' {
			c2++
		}
		var v any
		var next int
		ok := true
		if c := p.at(li, c2); c == 0 || c == '#' {
			next = p.nextContent(li + 1)
			if next < len(p.lines) && p.lines[next].indent > col {
				v, next, ok = p.node(next, p.lines[next].indent, col, depth+1)
			}
		} else {
			v, next, ok = p.node(li, c2, col, depth+1)
		}
		if !ok {
			return nil, 0, false
		}
		s = append(s, v)
		next = p.nextContent(next)
		if next == len(p.lines) || p.lines[next].indent < col {
			return s, next, true
		}
		if p.lines[next].indent > col {
			return nil, 0, false
		}
		if p.at(next, col) != '-' || !p.blankAt(next, col+1) {
			// The end of a sequence at the indentation of its key.
			return s, next, true
		}
		li = next
	}
}

// inlineScalar parses a single-line scalar that starts at line li, column col
// and must fill the rest of the line (but for a comment).
func (p *fastParser) inlineScalar(li, col int) (any, bool) {
	l := p.lines[li]
	switch c := p.at(li, col); c {
	case '"', '\'':
		s, end, ok := p.quoted(li, col)
		if !ok || !p.restBlank(li, end, false) {
			return nil, false
		}
		return s, true
	case '[', '{', '?', ':', ',', ']', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', 0, ' ':
		return nil, false
	case '-':
		if p.blankAt(li, col+1) {
			return nil, false
		}
	}
	i := l.start + col
	end := i
	for ; i < l.end; i++ {
		c := p.src[i]
		if c == ' ' {
			if i+1 < l.end && p.src[i+1] == '#' {
				break
			}
			continue
		}
		if c == ':' && (i+1 == l.end || p.src[i+1] == ' ') {
			return nil, false // "mapping values are not allowed in this context"
		}
		end = i + 1
	}
	v, ok := resolvePlain(p.src[l.start+col : end])
	if s, isString := v.(string); isString && s == "<<" {
		return nil, false
	}
	return v, ok
}

// quoted parses a single- or double-quoted scalar that starts and ends on
// line li. end is the column after the closing quote.
func (p *fastParser) quoted(li, col int) (s string, end int, ok bool) {
	l := p.lines[li]
	q := p.src[l.start+col]
	i := l.start + col + 1
	if q == '\'' {
		var b []byte
		start := i
		for ; i < l.end; i++ {
			if p.src[i] != '\'' {
				continue
			}
			if i+1 < l.end && p.src[i+1] == '\'' {
				b = append(b, p.src[start:i+1]...)
				i++
				start = i + 1
				continue
			}
			if b == nil {
				return p.src[start:i], i + 1 - l.start, true
			}
			b = append(b, p.src[start:i]...)
			return string(b), i + 1 - l.start, true
		}
		return "", 0, false
	}
	start := i
	for ; i < l.end; i++ {
		switch p.src[i] {
		case '"':
			return p.src[start:i], i + 1 - l.start, true
		case '\\':
			return p.doubleQuotedEscapes(li, start)
		}
	}
	return "", 0, false
}

// yamlEscapes are the one-character escapes of a double-quoted YAML
// scalar and the byte each stands for ("\\t" is a tab).
var yamlEscapes = map[byte]byte{
	'0': 0, 'a': '\a', 'b': '\b', 't': '\t', 'n': '\n', 'v': '\v',
	'f': '\f', 'r': '\r', 'e': 0x1b, ' ': ' ', '"': '"', '\\': '\\',
}

// doubleQuotedEscapes parses the rest of a double-quoted scalar that holds
// escapes, from offset start (after the opening quote).
func (p *fastParser) doubleQuotedEscapes(li, start int) (string, int, bool) {
	l := p.lines[li]
	var b []byte
	for i := start; i < l.end; i++ {
		c := p.src[i]
		if c == '"' {
			return string(b), i + 1 - l.start, true
		}
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i >= l.end {
			return "", 0, false // an escaped line break
		}
		if e, ok := yamlEscapes[p.src[i]]; ok {
			b = append(b, e)
			continue
		}
		var width int
		switch p.src[i] {
		case 'x':
			width = 2
		case 'u':
			width = 4
		case 'U':
			width = 8
		default:
			return "", 0, false
		}
		if width == 0 {
			continue
		}
		if i+width >= l.end {
			return "", 0, false
		}
		n, err := strconv.ParseUint(p.src[i+1:i+1+width], 16, 32)
		if err != nil || (n >= 0xd800 && n <= 0xdfff) || n > 0x10ffff {
			return "", 0, false
		}
		b = utf8.AppendRune(b, rune(n))
		i += width
	}
	return "", 0, false
}

// flow parses a single-line flow sequence or mapping at line li, column col.
// end is the column after the closing bracket.
func (p *fastParser) flow(li, col, depth int) (v any, end int, ok bool) {
	if depth > maxFastDepth {
		return nil, 0, false
	}
	open := p.at(li, col)
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	i := p.skipSpaces(li, col+1)
	var list []any
	var m map[string]any
	if open == '{' {
		m = make(map[string]any)
	} else {
		list = []any{}
	}
	if p.at(li, i) == closing {
		if open == '{' {
			return m, i + 1, true
		}
		return list, i + 1, true
	}
	for {
		var item any
		var isKeyed bool
		var k string
		if open == '{' {
			kv, kend, ok := p.flowScalar(li, i)
			if !ok {
				return nil, 0, false
			}
			ks, isString := kv.(string)
			if !isString || ks == "<<" {
				return nil, 0, false
			}
			kstart := i
			i = p.skipSpaces(li, kend)
			if p.at(li, i) != ':' || !p.blankAt(li, i+1) || i-kstart > maxSimpleKey {
				return nil, 0, false
			}
			k, isKeyed = ks, true
			i = p.skipSpaces(li, i+1)
		}
		switch p.at(li, i) {
		case '[', '{':
			item, i, ok = p.flow(li, i, depth+1)
		default:
			item, i, ok = p.flowScalar(li, i)
		}
		if !ok {
			return nil, 0, false
		}
		if isKeyed {
			if _, dup := m[k]; dup && p.dupKeys {
				return nil, 0, false
			}
			m[k] = item
		} else {
			list = append(list, item)
		}
		i = p.skipSpaces(li, i)
		switch p.at(li, i) {
		case ',':
			i = p.skipSpaces(li, i+1)
			if c := p.at(li, i); c == ']' || c == '}' || c == ',' {
				return nil, 0, false
			}
		case closing:
			if open == '{' {
				return m, i + 1, true
			}
			return list, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

func (p *fastParser) skipSpaces(li, col int) int {
	for p.at(li, col) == ' ' {
		col++
	}
	return col
}

// flowScalar parses a quoted or plain scalar inside a flow collection.
func (p *fastParser) flowScalar(li, col int) (any, int, bool) {
	switch c := p.at(li, col); c {
	case '"', '\'':
		s, end, ok := p.quoted(li, col)
		return s, end, ok
	case '[', '{', '?', ':', ',', ']', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', 0, ' ':
		return nil, 0, false
	case '-':
		if p.blankAt(li, col+1) {
			return nil, 0, false
		}
	}
	l := p.lines[li]
	i := l.start + col
	end := i
	for ; i < l.end; i++ {
		c := p.src[i]
		if c == ' ' {
			if i+1 < l.end && p.src[i+1] == '#' {
				return nil, 0, false
			}
			continue
		}
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' {
			break
		}
		if c == '?' {
			return nil, 0, false
		}
		if c == ':' && (i+1 == l.end || p.src[i+1] == ' ') {
			break
		}
		end = i + 1
	}
	v, ok := resolvePlain(p.src[l.start+col : end])
	return v, end - l.start, ok
}

// blockScalar parses a literal (|) or folded (>) block scalar whose header is
// at line li, column col, inside a block collection at indentation parent.
// It follows libyaml's yaml_parser_scan_block_scalar.
func (p *fastParser) blockScalar(li, col, parent int) (any, int, bool) {
	literal := p.at(li, col) == '|'
	chomping := 0
	i := col + 1
	switch p.at(li, i) {
	case '+':
		chomping = 1
		i++
	case '-':
		chomping = -1
		i++
	}
	if !p.restBlank(li, i, false) || (p.at(li, i) != ' ' && p.at(li, i) != 0) {
		return nil, 0, false
	}
	// Leading empty lines and the indentation.
	var trailing []byte
	maxIndent := 0
	cur := li + 1
	for ; cur < len(p.lines); cur++ {
		l := p.lines[cur]
		if l.indent > maxIndent {
			maxIndent = l.indent
		}
		if l.start+l.indent != l.end {
			break
		}
		if l.end == len(p.src) {
			break // the end, without a line break
		}
		trailing = append(trailing, '\n')
	}
	if cur == len(p.lines) {
		return nil, 0, false // an empty block scalar
	}
	indent := max(maxIndent, parent+1, 1)
	if p.lines[cur].indent != indent {
		return nil, 0, false
	}
	var s, leading []byte
	leadingBlank := false
	for cur < len(p.lines) && p.lines[cur].indent >= indent && p.lines[cur].start+indent < p.lines[cur].end {
		l := p.lines[cur]
		trailingBlank := p.src[l.start+indent] == ' '
		if !literal && len(leading) > 0 && leading[0] == '\n' && !leadingBlank && !trailingBlank {
			if len(trailing) == 0 {
				s = append(s, ' ')
			}
			leading = leading[:0]
		} else {
			s = append(s, leading...)
			leading = leading[:0]
		}
		s = append(s, trailing...)
		trailing = trailing[:0]
		leadingBlank = trailingBlank
		s = append(s, p.src[l.start+indent:l.end]...)
		if l.end == len(p.src) {
			// The document ends without a line break.
			cur++
			break
		}
		leading = append(leading, '\n')
		cur++
		for ; cur < len(p.lines); cur++ {
			l := p.lines[cur]
			if l.start+min(l.indent, indent) != l.end || l.end == len(p.src) {
				break
			}
			trailing = append(trailing, '\n')
		}
	}
	if chomping != -1 {
		s = append(s, leading...)
	}
	if chomping == 1 {
		s = append(s, trailing...)
	}
	next := p.nextContent(cur)
	if next < len(p.lines) && p.lines[next].indent > parent {
		return nil, 0, false
	}
	return string(s), cur, true
}

// resolvePlain resolves a plain scalar the way go-yaml v2 resolves it into an
// interface{} and sigs.k8s.io/yaml then turns it into JSON: null, bool,
// number (float64) or string. ok is false for NaN and infinities, which JSON
// cannot hold.
func resolvePlain(s string) (any, bool) {
	if s == "" {
		return nil, true
	}
	switch s[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		switch s {
		case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
			return true, true
		case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
			return false, true
		case "~", "null", "Null", "NULL":
			return nil, true
		}
		return s, true
	case '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return nil, false
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, finite(f)
		}
		return s, true
	case '+', '-':
		switch s {
		case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
			return nil, false
		}
		return resolveNumber(s)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumber(s)
	}
	return s, true
}

// resolveNumber follows go-yaml v2's resolve for scalars that start with a
// sign or a digit.
func resolveNumber(s string) (any, bool) {
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return float64(i), true
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return float64(u), true
	}
	if yamlStyleFloat(plain) {
		if f, err := strconv.ParseFloat(plain, 64); err == nil {
			return f, finite(f)
		}
	}
	if strings.HasPrefix(plain, "0b") {
		if i, err := strconv.ParseInt(plain[2:], 2, 64); err == nil {
			return float64(i), true
		}
		if u, err := strconv.ParseUint(plain[2:], 2, 64); err == nil {
			return float64(u), true
		}
	} else if strings.HasPrefix(plain, "-0b") {
		if i, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
			return float64(i), true
		}
	}
	return s, true
}

func finite(f float64) bool {
	return f-f == 0
}

// yamlStyleFloat matches ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
// without a regexp.
func yamlStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
