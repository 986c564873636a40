package variables

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/jmespath"
)

var (
	// reVariable is Kyverno's RegexVariables: a {{ }} at the start of the
	// string, or one preceded by a character other than a backslash (group 1).
	// It matches innermost variables only; single braces are allowed inside
	// ({{ {a: b} }}), double braces are not, which is what makes nesting work.
	reVariable = regexp.MustCompile(`(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})`)
	// reVariableInit is Kyverno's RegexVariableInit: the match begins with the
	// variable itself, not with a prefix character.
	reVariableInit = regexp.MustCompile(`^\{\{(\{[^{}]*\}|[^{}])*\}\}`)
)

// Limits that keep hostile values from hanging an evaluation. Kyverno has
// none: a variable whose value embeds itself loops forever there.
const (
	// maxPasses bounds the re-scans of one string (nesting depth plus
	// substituted values that contain variables).
	maxPasses = 64
	// maxDepth bounds how deep values returned by whole-string variables are
	// walked for more variables.
	maxDepth = 32
	// maxResolutions bounds the variables resolved by one Render.
	maxResolutions = 10000
	// maxLength bounds the length of a string being substituted.
	maxLength = 1 << 20
	// maxWork bounds the bytes of strings one Render builds.
	maxWork = 1 << 26
	// maxScan bounds the bytes one Render searches for variables in
	// strings it builds or walks (each pass of nested variables searches
	// the whole string again, at 60-100 ns a byte): a string of a megabyte
	// nesting variables deep took five seconds before this limit.
	maxScan = 4 << 20
)

// IsVariable reports whether s holds at least one unescaped {{ }} variable
// (Kyverno's regex.IsVariable).
func IsVariable(s string) bool {
	return strings.Contains(s, "{{") && reVariable.MatchString(s)
}

// Resolver resolves one variable: the evaluator searches q in its scope
// (request, context entries, foreach element, ...). A nil value is legal.
type Resolver func(q *jmespath.Query) (any, error)

// Env is what rendering needs from the evaluation.
type Env struct {
	// Resolve resolves one variable. Required. It must fail for a path that
	// does not exist, as Kyverno's context does: that is how {{@}} learns
	// whether a mutate target is in scope (it probes "target").
	Resolve Resolver
	// Delete is set for a DELETE request. As in Kyverno, every variable then
	// reads "request.oldObject" where its text says "request.object".
	Delete bool
}

// Var is one {{ }} variable of a template or document.
type Var struct {
	// Path is the Kyverno path of the string holding the variable ("" for
	// the root, "/spec/containers/0/image" below it).
	Path string
	// Source is the variable as written, braces included: "{{ a.b }}".
	// Empty for nested variables, which exist only after rendering.
	Source string
	// Expr is the expression: the text between the braces, trimmed, without
	// the "-" of shallow substitution.
	Expr string
	// Query is the parsed expression as Kyverno queries it: for {{@}} the
	// request.object path derived from Path; for a nested variable the outer
	// expression with every inner variable replaced by null, which is how
	// Kyverno's policy validation sees it.
	Query *jmespath.Query
	// Nested marks a variable found only once those inside or before it were
	// substituted: the outer one of {{ a.{{ b }} }}, or the second one of
	// {{a}}{{b}} (Kyverno's scan needs a character before a variable). It is
	// parsed again at every Render.
	Nested bool
}

// Template is one string of a policy, parsed: literal text and {{ }}
// variables. It is immutable and safe for concurrent use.
type Template struct {
	src     string
	path    string
	vars    []*variable // the variables of the first pass, in order
	static  string      // the rendered text when vars is empty
	staticV any         // static, boxed once: Render returns it
	nested  []Var       // variables of later passes, as the compile check saw them
}

// variable is one match of reVariable.
type variable struct {
	match   string // the regex match, prefix character included
	text    string // the {{ }} itself
	prefix  string // the character before text, if any
	expr    string
	shallow bool
	// Parsed queries; nil for variables found while rendering.
	q   *query
	cur *current // set when expr is "@"
}

// query is an expression and, when its text names request.object, the
// variant Kyverno queries for DELETE requests.
type query struct {
	text, delText string
	q, del        *jmespath.Query
	delErr        error
}

// current holds the queries {{@}} may stand for, depending on whether a
// mutate target is in scope.
type current struct {
	probe          *jmespath.Query // "target"
	target, object *query
}

// Parse parses one string of a policy. A variable whose expression is not
// valid JMESPath is an *engine.Error with Code engine.CodeInvalidVariable,
// as is a nested variable that would not parse with its inner variables
// replaced by null (Kyverno's policy validation does the same).
func Parse(s string) (*Template, error) {
	t, errs := parseTemplate(s, "", "")
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return t, nil
}

// parseTemplate parses s found at the Kyverno path ptr; field is the same
// place in the dotted form of compile errors.
func parseTemplate(s, ptr, field string) (*Template, engine.Errors) {
	t := &Template{src: s, path: ptr}
	if !strings.Contains(s, "{{") {
		t.setStatic(s)
		return t, nil
	}
	t.vars = scan(s)
	if len(t.vars) == 0 {
		t.setStatic(strings.ReplaceAll(s, `\{{`, "{{"))
		return t, nil
	}
	var errs engine.Errors
	for _, v := range t.vars {
		if err := v.compile(ptr); err != nil {
			errs = append(errs, &engine.Error{
				Code:    engine.CodeInvalidVariable,
				Path:    field,
				Message: fmt.Sprintf("variable %s: %v", jmespath.Excerpt(v.text), err),
				Err:     err,
			})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if err := t.check(field); err != nil {
		return nil, engine.Errors{err}
	}
	return t, nil
}

// setStatic sets the rendered text of a template without variables.
func (t *Template) setStatic(s string) {
	t.static, t.staticV = s, s
}

// scan finds the variables of one pass, as Kyverno's substituteVariablesIfAny
// does.
func scan(s string) []*variable {
	if !strings.Contains(s, "{{") {
		return nil
	}
	locs := reVariable.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return nil
	}
	vars := make([]*variable, len(locs))
	for i, loc := range locs {
		m := s[loc[0]:loc[1]]
		v := &variable{match: m, text: m}
		if !reVariableInit.MatchString(m) {
			v.prefix, v.text = m[:1], m[1:]
		}
		v.expr, v.shallow = trimVariable(v.text)
		vars[i] = v
	}
	return vars
}

// trimVariable is Kyverno's replaceBracesAndTrimSpaces.
func trimVariable(v string) (expr string, shallow bool) {
	expr = strings.ReplaceAll(v, "{{", "")
	expr = strings.ReplaceAll(expr, "}}", "")
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "-") {
		return strings.TrimSpace(expr[1:]), true
	}
	return expr, false
}

func (v *variable) compile(ptr string) error {
	if v.expr == "@" {
		cur, err := compileCurrent(ptr)
		if err != nil {
			return err
		}
		v.cur = cur
		return nil
	}
	q, err := compileQuery(v.expr)
	if err != nil {
		return err
	}
	v.q = q
	return nil
}

func compileQuery(text string) (*query, error) {
	q, err := parseQuery(text)
	if err != nil {
		return nil, err
	}
	out := &query{text: text, q: q}
	if strings.Contains(text, "request.object") {
		out.delText = strings.ReplaceAll(text, "request.object", "request.oldObject")
		out.del, out.delErr = parseQuery(out.delText)
	}
	return out, nil
}

func compileCurrent(ptr string) (*current, error) {
	probe, err := parseQuery("target")
	if err != nil {
		return nil, err
	}
	target, err := compileQuery(currentExpr(ptr, "target"))
	if err != nil {
		return nil, err
	}
	object, err := compileQuery(currentExpr(ptr, "request.object"))
	if err != nil {
		return nil, err
	}
	return &current{probe: probe, target: target, object: object}, nil
}

// currentExpr is the expression Kyverno substitutes for {{@}} in a string at
// ptr: the path, past "foreach" and minus its first two elements
// (validate.pattern, mutate.patchStrategicMerge, ...), under prefix.
func currentExpr(ptr, prefix string) string {
	p := parsePointer(ptr).skipPast("foreach").skipN(2)
	return pointer(append(strings.Split(prefix, "."), p...)).jmesPath()
}

// parseQuery parses a variable's expression; the empty expression is
// rejected as Kyverno's context does.
func parseQuery(text string) (*jmespath.Query, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("invalid query (nil)")
	}
	q, err := jmespath.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("incorrect query %s: %w", jmespath.Excerpt(text), err)
	}
	return q, nil
}

// check runs the template once with every variable resolving to null, the way
// Kyverno's policy validation does with its mock context, to parse the
// variables that only appear once inner ones are substituted.
func (t *Template) check(field string) *engine.Error {
	if !t.mayNest() {
		return nil
	}
	r := &renderer{env: Env{Resolve: func(*jmespath.Query) (any, error) { return nil, nil }}, mock: true}
	if _, _, err := r.renderString(t); err != nil {
		e := &engine.Error{Code: engine.CodeInvalidVariable, Path: field, Message: err.Error(), Err: err}
		if ee, ok := err.(*engine.Error); ok {
			e.Message = ee.Message
		}
		return e
	}
	t.nested = r.nested
	return nil
}

// mayNest reports whether a second pass can find variables once the first
// pass substituted null for every variable.
func (t *Template) mayNest() bool {
	if len(t.vars) == 1 && t.vars[0].text == t.src {
		return false
	}
	return strings.Count(t.src, "{{") > len(t.vars)
}

// String returns the source text.
func (t *Template) String() string { return t.src }

// HasVariables reports whether the string holds any {{ }} variable. A string
// without variables may still render differently from its source: escaped
// \{{ lose their backslash.
func (t *Template) HasVariables() bool { return len(t.vars) > 0 }

// Vars returns the variables of the string: those written in it, then the
// nested ones as Kyverno's validation sees them.
func (t *Template) Vars() []Var {
	out := make([]Var, 0, len(t.vars)+len(t.nested))
	for _, v := range t.vars {
		out = append(out, v.public(t.path))
	}
	return append(out, t.nested...)
}

func (v *variable) public(ptr string) Var {
	out := Var{Path: ptr, Source: v.text, Expr: v.expr}
	switch {
	case v.cur != nil:
		out.Query = v.cur.object.q
	case v.q != nil:
		out.Query = v.q.q
	}
	return out
}

// Render substitutes the variables. A string that is exactly one variable
// renders to the variable's value, whatever its type; otherwise values are
// embedded as text (strings as they are, anything else as JSON) and the
// result is a string. Maps and lists returned by a whole-string variable are
// searched for more variables, as Kyverno does. The result may share
// structure with resolved values: treat it as read-only.
func (t *Template) Render(env Env) (any, error) {
	r := &renderer{env: env}
	return r.template(t, 0)
}
