package kyvernotest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// MaxLocateBytes is the largest policy file read again to find the lines
// of the fields of its compile errors (64 MiB); beyond it, or for standard
// input, the errors name the field without file and line.
const MaxLocateBytes = 64 << 20

// locatedError is a policy's compile error whose problems name the file
// and line of their field: "compile ClusterPolicy "p": file.yaml:12:
// spec.rules[0].validate.message: ...". Unwrap gives the engine's error.
type locatedError struct {
	err error
	msg string
}

func (e *locatedError) Error() string { return e.msg }
func (e *locatedError) Unwrap() error { return e.err }

// locate adds to each problem of a decode or compile error of the
// document of file starting at docLine the file name and the line of its
// field (the document's line when the field is not found), after prefix
// ("compile ClusterPolicy "p""). The file is read again,
// up to maxBytes; when it cannot be, err is returned as it is.
func locate(file string, docLine int, prefix string, err error, maxBytes int) error {
	errs := engine.As(err)
	if len(errs) == 0 {
		return err
	}
	data, rerr := safefile.ReadFile(file, int64(maxBytes))
	if rerr != nil {
		return err
	}
	root := documentAt(data, docLine)
	parts := make([]string, len(errs))
	for i, e := range errs {
		line := docLine
		if root != nil {
			if n := fieldNode(root, e.Path); n != nil {
				line = n.Line
			}
		}
		parts[i] = fmt.Sprintf("%s:%d: %s", file, line, e.Error())
	}
	return &locatedError{err: err, msg: prefix + ": " + strings.Join(parts, "; ")}
}

// documentAt returns the mapping of the YAML document of data that starts
// at line (the first whose content starts at or after it), or nil.
func documentAt(data []byte, line int) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return nil
		}
		if len(doc.Content) == 0 {
			continue
		}
		if n := doc.Content[0]; n.Line >= line && n.Kind == yaml.MappingNode {
			return n
		}
	}
}

// fieldNode follows a field path (spec.rules[0].validate.message; a key
// may hold dots) from n; nil when it leads nowhere.
func fieldNode(n *yaml.Node, path string) *yaml.Node {
	for path != "" {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch {
		case path[0] == '.':
			path = path[1:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 || n.Kind != yaml.SequenceNode {
				return nil
			}
			i, err := strconv.Atoi(path[1:end])
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n, path = n.Content[i], path[end+1:]
		default:
			if n.Kind != yaml.MappingNode {
				return nil
			}
			var next *yaml.Node
			rest := ""
			best := -1
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if !strings.HasPrefix(path, k) || len(k) <= best {
					continue
				}
				if r := path[len(k):]; r == "" || r[0] == '.' || r[0] == '[' {
					next, rest, best = n.Content[i+1], r, len(k)
					if r == "" {
						next = n.Content[i] // the key's line
						if n.Content[i+1].Kind == yaml.ScalarNode {
							next = n.Content[i+1]
						}
					}
				}
			}
			if next == nil {
				return nil
			}
			n, path = next, rest
		}
	}
	return n
}
