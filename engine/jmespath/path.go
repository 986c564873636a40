package jmespath

import gojmespath "github.com/kyverno/go-jmespath"

// A simple path is a query made only of field names and integer indexes
// (request.object.spec.containers[0].image, element.name, @): most
// variables of Kyverno policies are. Search walks such a path over
// map[string]any and []any directly, without go-jmespath's interpreter,
// which allocates for every node it visits. The walk gives up (and the
// interpreter runs) wherever the result could differ: a missing key, whose
// NotFoundError only the interpreter can build, and values of other types
// (structs reached by reflection).

// step is one element of a simple path: a field name, or an index when
// field is empty.
type step struct {
	field string
	index int
}

// simplePath returns the steps of node when it is a simple path.
func simplePath(node gojmespath.ASTNode) ([]step, bool) {
	var steps []step
	var walk func(n gojmespath.ASTNode) bool
	walk = func(n gojmespath.ASTNode) bool {
		switch n.NodeType {
		case gojmespath.ASTField:
			name, ok := n.Value.(string)
			if !ok || name == "" {
				return false
			}
			steps = append(steps, step{field: name})
			return true
		case gojmespath.ASTIndex:
			i, ok := n.Value.(int)
			if !ok {
				return false
			}
			steps = append(steps, step{index: i})
			return true
		case gojmespath.ASTIdentity, gojmespath.ASTCurrentNode:
			return true
		case gojmespath.ASTSubexpression, gojmespath.ASTIndexExpression:
			if len(n.Children) != 2 {
				return false
			}
			return walk(n.Children[0]) && walk(n.Children[1])
		}
		return false
	}
	if !walk(node) {
		return nil, false
	}
	return steps, true
}

// walk outcomes.
const (
	walked      = iota // the value was found
	missing            // a key is missing: go-jmespath's NotFoundError
	unsupported        // the interpreter must decide
)

// walkPath evaluates steps against data as go-jmespath does; ok is false
// where the interpreter must decide.
func walkPath(steps []step, data any) (any, bool) {
	v, outcome := walkSteps(steps, data)
	return v, outcome == walked
}

// walkSteps evaluates steps against data.
func walkSteps(steps []step, data any) (any, int) {
	v := data
	for _, s := range steps {
		if s.field != "" {
			switch m := v.(type) {
			case map[string]any:
				var ok bool
				v, ok = m[s.field]
				if !ok {
					return nil, missing
				}
			case nil:
				// A field of null is null.
			default:
				return nil, unsupported
			}
			continue
		}
		switch l := v.(type) {
		case []any:
			v = at(l, s.index)
		case nil:
		default:
			return nil, unsupported
		}
	}
	return v, walked
}

// at is l[i], counted from the end when i is negative; null out of range.
func at(l []any, i int) any {
	if i < 0 {
		i += len(l)
	}
	if i < 0 || i >= len(l) {
		return nil
	}
	return l[i]
}

// orLiteral returns the parts of a query "path || literal"
// (request.operation || 'BACKGROUND', a common precondition).
func orLiteral(node gojmespath.ASTNode) (steps []step, literal any, ok bool) {
	if node.NodeType != gojmespath.ASTOrExpression || len(node.Children) != 2 || node.Children[1].NodeType != gojmespath.ASTLiteral {
		return nil, nil, false
	}
	steps, ok = simplePath(node.Children[0])
	return steps, node.Children[1].Value, ok
}

// walkOr evaluates "path || literal" as go-jmespath does: a missing key
// is null, and a false value (isFalse) gives the literal.
func walkOr(steps []step, literal, data any) (any, bool) {
	v, outcome := walkSteps(steps, data)
	switch outcome {
	case unsupported:
		return nil, false
	case missing:
		return literal, true
	}
	switch t := v.(type) {
	case nil:
		return literal, true
	case bool:
		if !t {
			return literal, true
		}
	case string:
		if t == "" {
			return literal, true
		}
	case []any:
		if len(t) == 0 {
			return literal, true
		}
	case map[string]any:
		if len(t) == 0 {
			return literal, true
		}
	case float64, int, int64:
	default:
		return nil, false
	}
	return v, true
}
