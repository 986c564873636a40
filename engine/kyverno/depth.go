package kyverno

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/verdict-policy/verdict/engine"
)

// MaxDocumentDepth bounds the nesting of maps and lists in a policy or
// policy exception document: DecodePolicies and DecodeExceptions refuse a
// deeper document with Code engine.CodeDecode. The YAML and JSON parsers
// stop at 10,000 levels, but compiling a document that deep walks it
// recursively and builds a path string per level (a 60 KB pattern nested
// 9,000 deep took 355 MB); the policies of the Kyverno policy library nest
// at most 18 deep.
const MaxDocumentDepth = 256

// maxDepthPath is the number of levels of the path a depth error names;
// "..." stands for the rest.
const maxDepthPath = 16

// depthItem is a value to visit, at depth (maps and lists above it, plus
// one), with its path.
type depthItem struct {
	v     any
	depth int
	path  string
}

// checkDocumentDepth returns an error when maps and lists nest more than
// max deep in v. It walks v with an explicit stack and stops at the first
// map or list too deep.
func checkDocumentDepth(v any, max int) *engine.Error {
	stack := []depthItem{{v: v, depth: 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		m, isMap := it.v.(map[string]any)
		l, isList := it.v.([]any)
		if !isMap && !isList {
			continue
		}
		if it.depth > max {
			path := it.path
			if it.depth > maxDepthPath+1 {
				path += "..."
			}
			return engine.Errorf(engine.CodeDecode, path,
				fmt.Sprintf("maps and lists nest deeper than %d levels (MaxDocumentDepth)", max))
		}
		for k, e := range m {
			stack = append(stack, depthItem{v: e, depth: it.depth + 1, path: it.childPath(k, -1)})
		}
		for i, e := range l {
			stack = append(stack, depthItem{v: e, depth: it.depth + 1, path: it.childPath("", i)})
		}
	}
	return nil
}

// childPath is the path of the child of it at key k, or at index i when i
// is not negative; below maxDepthPath levels, it's own path.
func (it depthItem) childPath(k string, i int) string {
	switch {
	case it.depth > maxDepthPath:
		return it.path
	case i >= 0:
		return it.path + "[" + strconv.Itoa(i) + "]"
	}
	if len(k) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(k[cut]) {
			cut--
		}
		k = k[:cut] + "..."
	}
	if it.path == "" {
		return k
	}
	return it.path + "." + k
}
