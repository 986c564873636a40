package kyverno

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"

	"github.com/verdict-policy/verdict/engine"
)

// chunk is one document of a multi-document input, as Kubernetes' YAMLReader
// cuts it: a line that starts with "---" ends a document.
type chunk struct {
	data  string
	first int // 1-based line, in the input, of the chunk's first line
	line  int // 1-based line of its first line that is not blank or a comment
}

// splitChunks cuts data into documents and drops the empty ones (blank lines
// and comments only), like Kyverno's extyaml.SplitDocuments.
func splitChunks(data string) ([]chunk, error) {
	var chunks []chunk
	start, startLine := 0, 1 // the current chunk
	content := 0             // line of its first content line, 0 if none yet
	lineNo := 1
	flush := func(end int) {
		if content != 0 {
			chunks = append(chunks, chunk{data: data[start:end], first: startLine, line: content})
		}
	}
	for off := 0; off < len(data); lineNo++ {
		end := strings.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		line := data[off:next]
		if strings.HasPrefix(line, "---") {
			rest := strings.TrimSpace(line[3:])
			if len(rest) > 0 && rest[0] != '#' {
				return nil, engine.Errorf(engine.CodeDecode, "", fmt.Sprintf("line %d: invalid document separator %q", lineNo, truncate(rest, 40)))
			}
			flush(off)
			start, startLine, content = next, lineNo+1, 0
		} else if content == 0 {
			if t := strings.TrimSpace(line); len(t) > 0 && t[0] != '#' {
				content = lineNo
			}
		}
		off = next
	}
	flush(len(data))
	return chunks, nil
}

// value is one document decoded into JSON values, with the line it starts on.
type value struct {
	v    any
	line int
}

// parseChunk decodes one document. In strict mode a repeated mapping key is
// an error (as in Kubernetes' strict YAML decoding); otherwise the last value
// wins. Outside strict mode, a chunk of JSON values (an object, or several
// back to back) is decoded as JSON.
func parseChunk(c chunk, strict bool, fast *fastYAML) ([]value, error) {
	if !strict {
		if i := firstNonSpace(c.data); i < len(c.data) && c.data[i] == '{' {
			if vs, ok := parseJSONStream(c); ok {
				return vs, nil
			}
		}
	}
	if v, ok := fast.parse(c.data, strict); ok {
		return []value{{v: v, line: c.line}}, nil
	}
	v, err := parseSlow(c, strict)
	if err != nil {
		return nil, err
	}
	return []value{{v: v, line: c.line}}, nil
}

// ParseDocument parses data, one YAML document, into JSON values
// (map[string]any, []any, string, float64, bool, nil) as go-yaml v2 and
// sigs.k8s.io/yaml read it, when data is in the block-style subset of YAML
// that Kubernetes manifests are written in (fastyaml.go) and repeats no
// mapping key. ok is false otherwise (a document marker or directive,
// anchors, tags, multi-line plain scalars, a repeated key, ...): the
// caller then parses data with go-yaml. Scalars share data's memory.
func ParseDocument(data string) (v any, ok bool) {
	var f fastYAML
	return f.parse(data, true)
}

func firstNonSpace(b string) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// parseJSONStream decodes a chunk that holds one or more JSON values. ok is
// false if it is not valid JSON; the caller then reads it as YAML.
func parseJSONStream(c chunk) ([]value, bool) {
	dec := json.NewDecoder(strings.NewReader(c.data))
	dec.UseNumber()
	var out []value
	for {
		off := int(dec.InputOffset())
		off += firstNonSpace(c.data[off:])
		if off == len(c.data) {
			return out, true
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		v, ok := fromJSONNumbers(v)
		if !ok {
			return nil, false
		}
		out = append(out, value{v: v, line: c.first + strings.Count(c.data[:off], "\n")})
	}
}

// fromJSONNumbers replaces json.Number values by what go-yaml v2 resolves
// the same literal to, in place.
func fromJSONNumbers(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e, ok := fromJSONNumbers(e)
			if !ok {
				return nil, false
			}
			x[k] = e
		}
	case []any:
		for i, e := range x {
			e, ok := fromJSONNumbers(e)
			if !ok {
				return nil, false
			}
			x[i] = e
		}
	case json.Number:
		return resolveNumber(string(x))
	}
	return v, true
}

// parseSlow decodes a chunk with go-yaml v2 and converts the result the way
// sigs.k8s.io/yaml's YAMLToJSON does, followed by a JSON decoding.
func parseSlow(c chunk, strict bool) (any, error) {
	var raw any
	unmarshal := yaml.Unmarshal
	if strict {
		unmarshal = yaml.UnmarshalStrict
	}
	if err := unmarshal([]byte(c.data), &raw); err != nil {
		return nil, engine.Errorf(engine.CodeDecode, "", shiftLines(err.Error(), c.first-1))
	}
	v, err := fromYAML(raw)
	if err != nil {
		return nil, engine.Errorf(engine.CodeDecode, "", err.Error())
	}
	return v, nil
}

var yamlLineRe = regexp.MustCompile(`line (\d+)`)

// shiftLines rewrites the "line N" of a go-yaml message, relative to a chunk,
// into lines of the whole input, and drops the "yaml: " prefix.
func shiftLines(msg string, delta int) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	return yamlLineRe.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(m[len("line "):])
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+delta)
	})
}

// fromYAML converts a go-yaml v2 value into a JSON value.
func fromYAML(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if !utf8.ValidString(x) {
			return strings.ToValidUTF8(x, "\uFFFD"), nil
		}
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("unsupported value: %s", strconv.FormatFloat(x, 'g', -1, 64))
		}
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			e, err := fromYAML(e)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, err := yamlKey(k)
			if err != nil {
				return nil, err
			}
			e, err := fromYAML(e)
			if err != nil {
				return nil, err
			}
			out[ks] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// yamlKey turns a go-yaml mapping key into a string as sigs.k8s.io/yaml does.
func yamlKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		if k {
			return "true", nil
		}
		return "false", nil
	}
	return "", fmt.Errorf("unsupported map key of type %T: %v", k, k)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Object is one resource read by SplitDocuments.
type Object struct {
	// Line is the 1-based line where the document starts (for the items of
	// a List, where the List starts).
	Line  int
	Value map[string]any
}

// SplitDocuments returns every non-empty document of a multi-document YAML
// or JSON input as a JSON object (map[string]any, numbers as float64) with
// the 1-based line where it starts. A `kind: List` is replaced by its items.
// YAML is read as Kubernetes reads it (go-yaml v2 and sigs.k8s.io/yaml:
// `yes` is true, a repeated key keeps its last value). Errors are
// *engine.Error with Code engine.CodeDecode, wrapped in a *DocumentError;
// every document's error is reported. The strings of the result share one
// copy of data.
func SplitDocuments(source string, data []byte) ([]Object, error) {
	chunks, err := splitChunks(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	fast := &fastYAML{keys: make(map[string]string)}
	var out []Object
	var errs []error
	n := 0
	for _, c := range chunks {
		vs, err := parseChunk(c, false, fast)
		if err != nil {
			n++
			errs = append(errs, docError(source, n, c.line, err))
			continue
		}
		for _, v := range vs {
			n++
			objs, err := objects(v)
			if err != nil {
				errs = append(errs, docError(source, n, v.line, err))
				continue
			}
			out = append(out, objs...)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}

// objects returns the object of a document, or the items of a List.
func objects(v value) ([]Object, error) {
	m, ok := v.v.(map[string]any)
	if !ok {
		return nil, engine.Errorf(engine.CodeDecode, "", "document is "+jsonType(v.v)+", not an object")
	}
	if m["kind"] != "List" {
		return []Object{{Line: v.line, Value: m}}, nil
	}
	items, ok := m["items"].([]any)
	if !ok && m["items"] != nil {
		return nil, engine.Errorf(engine.CodeDecode, "items", "expected array, got "+jsonType(m["items"]))
	}
	out := make([]Object, 0, len(items))
	var errs engine.Errors
	for i, it := range items {
		im, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, engine.Errorf(engine.CodeDecode, "items["+strconv.Itoa(i)+"]", "expected object, got "+jsonType(it)))
			continue
		}
		out = append(out, Object{Line: v.line, Value: im})
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// DocumentError is the error of one document of an input: it wraps the
// *engine.Error or engine.Errors of that document with where it is.
type DocumentError struct {
	Source string // the input, as the caller named it
	Index  int    // 1-based, among the documents that are not empty
	Line   int    // 1-based line where the document starts
	Err    error
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("%s: document %d (line %d): %v", e.Source, e.Index, e.Line, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }

func docError(source string, n, line int, err error) error {
	return &DocumentError{Source: source, Index: n, Line: line, Err: err}
}

// joinErrors returns the only error of errs, or all of them joined (engine.As
// then finds the first document's).
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// jsonType names the JSON type of v for messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int, int64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
