package gpol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/verdict-policy/verdict/engine/internal/jsonconv"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// A generation template (spec.generate[].template) is YAML, one resource
// per document, as Kyverno's gpol templates: with interpolate: cel, a
// scalar that is one `(( expression ))` placeholder takes the CEL value
// (any type), a scalar mixing text and placeholders is a string whose
// placeholders must be scalars; `\((` writes a literal `((`; mapping keys
// hold no placeholder. Without interpolation the YAML is taken as is.

// template is a compiled generation template.
type template struct {
	docs []tnode
}

// tnode is a compiled part of a template document.
type tnode interface {
	render(ctx context.Context, act *kyvernocel.Activation) (any, error)
}

// tliteral is a subtree without placeholders, copied on each render.
type tliteral struct{ v any }

// tmap, tlist are a mapping and a sequence holding placeholders.
type tmap struct {
	keys []string
	vals []tnode
}

type tlist struct{ items []tnode }

// tsplice is a scalar that is one placeholder.
type tsplice struct {
	text string
	prog cel.Program
}

// tinterp is a scalar mixing text and placeholders (prog nil: text).
type tinterp struct{ parts []tpart }

type tpart struct {
	text string
	prog cel.Program
}

// compileTemplate compiles tpl's YAML documents; its placeholders compile
// in env. A problem names the line.
func compileTemplate(env *kyvernocel.Env, tpl *policiesv1beta1.GenerationTemplate) (*template, error) {
	c := tcompiler{env: env, interpolate: tpl.Interpolate == policiesv1beta1.InterpolationModeCEL}
	dec := yaml.NewDecoder(strings.NewReader(tpl.Value))
	t := &template{}
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("failed to parse YAML: %v", err)
		}
		root := &doc
		if root.Kind == yaml.DocumentNode {
			if len(root.Content) == 0 {
				continue
			}
			root = root.Content[0]
		}
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue
		}
		n, err := c.node(root)
		if err != nil {
			return nil, err
		}
		switch n := n.(type) {
		case *tmap, *tsplice:
		case *tliteral:
			if _, ok := n.v.(map[string]any); !ok {
				return nil, fmt.Errorf("line %d: document must be a mapping describing a resource", root.Line)
			}
		default:
			return nil, fmt.Errorf("line %d: document must be a mapping describing a resource", root.Line)
		}
		t.docs = append(t.docs, n)
	}
	if len(t.docs) == 0 {
		return nil, errors.New("template must contain at least one YAML document")
	}
	return t, nil
}

// render evaluates the placeholders with act: one resource per document.
func (t *template) render(ctx context.Context, act *kyvernocel.Activation) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(t.docs))
	for i, d := range t.docs {
		v, err := d.render(ctx, act)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: expected a mapping describing a resource, got %T", i+1, v)
		}
		out = append(out, m)
	}
	return out, nil
}

type tcompiler struct {
	env         *kyvernocel.Env
	interpolate bool
}

func (c *tcompiler) node(n *yaml.Node) (tnode, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !c.interpolate || !hasPlaceholder(n) {
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		return &tliteral{v: v}, nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := &tmap{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Kind != yaml.ScalarNode:
				return nil, fmt.Errorf("line %d: only scalar mapping keys are supported", k.Line)
			case placeholderIn(k.Value):
				return nil, fmt.Errorf("line %d: placeholders are not supported in mapping keys; use a whole-value placeholder on the parent field instead (e.g. `labels: (( variables.labels ))`)", k.Line)
			case k.Value == "<<":
				return nil, fmt.Errorf("line %d: YAML merge keys are not supported in subtrees containing placeholders", k.Line)
			}
			vn, err := c.node(v)
			if err != nil {
				return nil, err
			}
			m.keys, m.vals = append(m.keys, k.Value), append(m.vals, vn)
		}
		return m, nil
	case yaml.SequenceNode:
		l := &tlist{}
		for _, it := range n.Content {
			in, err := c.node(it)
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, in)
		}
		return l, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node kind", n.Line)
}

func (c *tcompiler) scalar(n *yaml.Node) (tnode, error) {
	parts, err := splitPlaceholders(n.Value)
	if err != nil {
		return nil, fmt.Errorf("line %d: %v", n.Line, err)
	}
	exprs := 0
	var text strings.Builder
	for _, p := range parts {
		if p.expr {
			exprs++
		}
		text.WriteString(p.text)
	}
	if exprs == 0 {
		return &tliteral{v: text.String()}, nil
	}
	compile := func(expr string) (cel.Program, error) {
		prog, _, err := c.env.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("line %d: invalid placeholder expression %q: %v", n.Line, expr, err)
		}
		return prog, nil
	}
	if len(parts) == 1 {
		prog, err := compile(parts[0].text)
		if err != nil {
			return nil, err
		}
		return &tsplice{text: parts[0].text, prog: prog}, nil
	}
	in := &tinterp{}
	for _, p := range parts {
		if !p.expr {
			in.parts = append(in.parts, tpart{text: p.text})
			continue
		}
		prog, err := compile(p.text)
		if err != nil {
			return nil, err
		}
		in.parts = append(in.parts, tpart{text: p.text, prog: prog})
	}
	return in, nil
}

func (n *tliteral) render(context.Context, *kyvernocel.Activation) (any, error) {
	return jsonconv.Copy(n.v), nil
}

func (n *tmap) render(ctx context.Context, act *kyvernocel.Activation) (any, error) {
	m := make(map[string]any, len(n.keys))
	for i, k := range n.keys {
		v, err := n.vals[i].render(ctx, act)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		m[k] = v
	}
	return m, nil
}

func (n *tlist) render(ctx context.Context, act *kyvernocel.Activation) (any, error) {
	out := make([]any, 0, len(n.items))
	for i, it := range n.items {
		v, err := it.render(ctx, act)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func (n *tsplice) render(ctx context.Context, act *kyvernocel.Activation) (any, error) {
	return placeholderValue(ctx, act, n.text, n.prog)
}

func (n *tinterp) render(ctx context.Context, act *kyvernocel.Activation) (any, error) {
	var b strings.Builder
	for _, p := range n.parts {
		if p.prog == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := placeholderValue(ctx, act, p.text, p.prog)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case string:
			b.WriteString(v)
		case bool, int64, float64:
			fmt.Fprintf(&b, "%v", v)
		default:
			return nil, fmt.Errorf("placeholder %q embedded in a string must evaluate to a scalar, got %T; use a whole-value placeholder for structured results", p.text, v)
		}
	}
	return b.String(), nil
}

// placeholderValue evaluates a placeholder into a JSON value.
func placeholderValue(ctx context.Context, act *kyvernocel.Activation, text string, prog cel.Program) (any, error) {
	val, _, err := prog.ContextEval(ctx, act)
	if err != nil {
		return nil, fmt.Errorf("failed to evaluate placeholder %q: %w", text, err)
	}
	v, err := nativeValue(val)
	if err != nil {
		return nil, fmt.Errorf("failed to convert placeholder %q result: %w", text, err)
	}
	return v, nil
}

func nativeValue(val ref.Val) (any, error) {
	switch val.Type() {
	case types.NullType:
		return nil, nil
	case types.StringType:
		return val.Value().(string), nil
	case types.BoolType:
		return val.Value().(bool), nil
	case types.IntType:
		return val.Value().(int64), nil
	case types.UintType:
		u := val.Value().(uint64)
		if u > math.MaxInt64 {
			return nil, fmt.Errorf("uint value %d overflows the supported integer range", u)
		}
		return int64(u), nil
	case types.DoubleType:
		return val.Value().(float64), nil
	}
	pv, err := val.ConvertToNative(reflect.TypeFor[*structpb.Value]())
	if err != nil {
		return nil, err
	}
	return pv.(*structpb.Value).AsInterface(), nil
}

// hasPlaceholder reports whether a node holds a placeholder or an escape.
func hasPlaceholder(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return hasPlaceholder(n.Alias)
	}
	if n.Kind == yaml.ScalarNode && (placeholderIn(n.Value) || strings.Contains(n.Value, `\((`)) {
		return true
	}
	for _, c := range n.Content {
		if hasPlaceholder(c) {
			return true
		}
	}
	return false
}

// placeholderIn reports whether s holds a `((` that is not escaped.
func placeholderIn(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], `\((`) {
			i += 2
			continue
		}
		if strings.HasPrefix(s[i:], "((") {
			return true
		}
	}
	return false
}

// tseg is a part of a scalar: text, or a placeholder's expression.
type tseg struct {
	text string
	expr bool
}

// splitPlaceholders splits s into text and `(( expression ))` parts; the
// end of a placeholder is the first `))` outside parentheses and CEL
// string literals.
func splitPlaceholders(s string) ([]tseg, error) {
	var out []tseg
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, tseg{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], `\((`):
			text.WriteString("((")
			i += 3
		case strings.HasPrefix(s[i:], "(("):
			expr, next, err := placeholderAt(s, i)
			if err != nil {
				return nil, err
			}
			flush()
			out = append(out, tseg{text: expr, expr: true})
			i = next
		default:
			text.WriteByte(s[i])
			i++
		}
	}
	flush()
	return out, nil
}

// placeholderAt reads the placeholder that opens at s[start:]: its
// trimmed expression and the index after its `))`.
func placeholderAt(s string, start int) (string, int, error) {
	depth := 0
	var quote byte
	for i := start + 2; i < len(s); i++ {
		ch := s[i]
		if quote != 0 {
			switch ch {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch ch {
		case '"', '\'':
			quote = ch
		case '(':
			depth++
		case ')':
			switch {
			case depth > 0:
				depth--
			case i+1 < len(s) && s[i+1] == ')':
				expr := strings.TrimSpace(s[start+2 : i])
				if expr == "" {
					return "", 0, fmt.Errorf("empty placeholder at offset %d", start)
				}
				return expr, i + 2, nil
			default:
				return "", 0, fmt.Errorf("unbalanced parenthesis in placeholder starting at offset %d", start)
			}
		}
	}
	if quote != 0 {
		return "", 0, fmt.Errorf("unterminated string literal in placeholder starting at offset %d", start)
	}
	return "", 0, fmt.Errorf("unterminated placeholder starting at offset %d: missing closing '))'", start)
}
