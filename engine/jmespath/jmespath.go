package jmespath

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	gojmespath "github.com/kyverno/go-jmespath"

	"github.com/verdict-policy/verdict/engine"
)

// Query is a parsed JMESPath expression whose function calls have been
// checked against the function table. It is immutable and safe for
// concurrent use.
type Query struct {
	src string
	ast gojmespath.ASTNode
	// path is set when the query is a simple path, or a simple path ||
	// a literal (or is set), see path.go.
	path    []step
	simple  bool
	or      bool
	literal any
	// compiled is the evaluator of the other queries, when all their
	// nodes are supported (see compile.go); nil otherwise.
	compiled evaluator
	// pure: no call of a function of impureFunctions.
	pure bool
	// shares: the fanout is above one, so the result may hold parts of
	// the data more than once; Search bounds it by MaxResultNodes.
	shares bool
}

// Parse parses expr and checks every function call in it against the
// function table: the name must exist (a JMESPath built-in or a Kyverno
// function), the number of arguments must match, and literal arguments
// (`1`, 'text', `{"a": 1}`) must have an accepted type.
//
// Before go-jmespath parses it, the expression must be at most
// MaxExpressionBytes long and MaxExpressionNesting deep; its tree must be at
// most MaxExpressionDepth deep. Beyond a limit the error wraps a
// *LimitError.
//
// Errors are *engine.Error with Code engine.CodeInvalidVariable and no Path;
// the caller knows where the expression came from.
func Parse(expr string) (q *Query, err error) {
	return parse(expr, defaultExprLimits)
}

func parse(expr string, lim exprLimits) (q *Query, err error) {
	ast, err := parseAST(expr, lim)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			p := &panicError{value: r}
			q, err = nil, &engine.Error{Code: engine.CodeInvalidVariable, Message: p.Error(), Err: p}
		}
	}()
	if problems := checkCalls(ast, nil); len(problems) > 0 {
		return nil, engine.Errorf(engine.CodeInvalidVariable, "", joinProblems(problems))
	}
	f := fanout(ast)
	if f > lim.fanout {
		err := fanoutError(f, lim.fanout)
		return nil, &engine.Error{Code: engine.CodeInvalidVariable, Message: err.Error(), Err: err}
	}
	q = &Query{src: expr, ast: copySortByInput(ast), shares: f > 1}
	q.pure = pure(q.ast)
	q.path, q.simple = simplePath(q.ast)
	if !q.simple {
		q.path, q.literal, q.or = orLiteral(q.ast)
	}
	if !q.simple && !q.or {
		q.compiled = compile(q.ast)
	}
	return q, nil
}

// CheckSyntax reports whether expr parses, within the same limits as
// Parse, without checking its function calls: the check Kyverno's policy
// validation makes of the jmesPath of context entries. Errors are as
// Parse's.
func CheckSyntax(expr string) error {
	_, err := parseAST(expr, defaultExprLimits)
	return err
}

// parseAST checks expr against lim, parses it with go-jmespath and checks
// the depth of the tree.
func parseAST(expr string, lim exprLimits) (ast gojmespath.ASTNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			p := &panicError{value: r}
			ast, err = gojmespath.ASTNode{}, &engine.Error{Code: engine.CodeInvalidVariable, Message: p.Error(), Err: p}
		}
	}()
	if err := checkText(expr, lim); err != nil {
		return ast, &engine.Error{Code: engine.CodeInvalidVariable, Message: err.Error(), Err: err}
	}
	ast, err = gojmespath.NewParser().Parse(expr)
	if err != nil {
		// go-jmespath's messages may quote a token (an index of 60,000
		// digits): they are shortened.
		return ast, &engine.Error{Code: engine.CodeInvalidVariable, Message: Excerpt(err.Error()), Err: err}
	}
	if err := checkDepth(&ast, lim.depth); err != nil {
		return ast, &engine.Error{Code: engine.CodeInvalidVariable, Message: err.Error(), Err: err}
	}
	return ast, nil
}

// copySortByInput rewrites every sort_by(list, &key) into
// sort_by(list[:], &key) at the AST level (an index expression with a full
// slice, which copies the array without dropping nulls). go-jmespath's
// sort_by sorts its input in place, which in Kyverno reorders the context
// data itself; here the data (and literals in the shared AST) stay as they
// are.
func copySortByInput(node gojmespath.ASTNode) gojmespath.ASTNode {
	for i, child := range node.Children {
		node.Children[i] = copySortByInput(child)
	}
	if node.NodeType == gojmespath.ASTFunctionExpression && node.Value == "sort_by" && len(node.Children) == 2 {
		fullSlice := gojmespath.ASTNode{NodeType: gojmespath.ASTSlice, Value: []*int{nil, nil, nil}}
		node.Children[0] = gojmespath.ASTNode{
			NodeType: gojmespath.ASTIndexExpression,
			Children: []gojmespath.ASTNode{node.Children[0], fullSlice},
		}
	}
	return node
}

// impureFunctions are the functions whose result depends on more than
// their arguments: the clock, the random source, the DNS resolver.
var impureFunctions = map[string]bool{
	"random": true, "time_now": true, "time_now_utc": true, "time_since": true, "is_external_url": true,
}

func pure(node gojmespath.ASTNode) bool {
	if node.NodeType == gojmespath.ASTFunctionExpression {
		if name, _ := node.Value.(string); impureFunctions[name] {
			return false
		}
	}
	for _, child := range node.Children {
		if !pure(child) {
			return false
		}
	}
	return true
}

// Pure reports whether Search of q gives the same result every time it is
// given the same data, up to the order of the keys of objects (keys(),
// values() and object projections list them in Go's map order, which
// varies from one evaluation to the next in go-jmespath too): q calls no
// function that reads the clock, the random source or the resolver.
func (q *Query) Pure() bool { return q.pure }

// String returns the source text of the query.
func (q *Query) String() string { return q.src }

// Options configure an Interpreter. The zero value behaves like Kyverno's
// default configuration, with the real clock.
type Options struct {
	// Now returns the current time for time_now, time_now_utc and
	// time_since. Default: time.Now.
	Now func() time.Time

	// Rand seeds random(). It is used under a lock, so it need not be
	// safe for concurrent use. Default: a ChaCha8 source seeded from
	// crypto/rand, one per Interpreter.
	Rand rand.Source

	// DefaultRegistry is the registry image_normalize adds to references
	// without one, like Kyverno's defaultRegistry setting.
	// Default: "docker.io".
	DefaultRegistry string

	// DisableDefaultRegistryMutation makes image_normalize leave references
	// without a registry registry-less, like Kyverno's
	// enableDefaultRegistryMutation: false. Default: false (the registry is
	// added).
	DisableDefaultRegistryMutation bool

	// LookupIP resolves host names for is_external_url. The engine does no
	// I/O itself: with the default (nil), is_external_url works for IP
	// addresses and fails for host names. Hosts wire a resolver, for
	// example a wrapper of net.DefaultResolver.LookupIP(ctx, "ip", host).
	LookupIP func(host string) ([]net.IP, error)
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails (Go 1.24+)
		o.Rand = rand.NewChaCha8(seed)
	}
	if o.DefaultRegistry == "" {
		o.DefaultRegistry = "docker.io"
	}
	return o
}

// env is what the function implementations may use besides their
// arguments. It is built once per Interpreter.
type env struct {
	now             func() time.Time
	lookupIP        func(host string) ([]net.IP, error)
	defaultRegistry string
	mutateRegistry  bool
	regexps         regexCache
	randMu          sync.Mutex
	rand            rand.Source
}

// seed returns a fresh seed for one random() call.
func (e *env) seed() int64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return int64(e.rand.Uint64() >> 1)
}

// Interpreter runs queries with Kyverno's function table. It is safe for
// concurrent use.
type Interpreter struct {
	caller *gojmespath.FunctionCaller
}

// New returns an Interpreter whose function caller holds the JMESPath
// built-ins and every Kyverno function of the table.
func New(opts Options) *Interpreter {
	opts = opts.withDefaults()
	e := &env{
		now:             opts.Now,
		lookupIP:        opts.LookupIP,
		defaultRegistry: opts.DefaultRegistry,
		mutateRegistry:  !opts.DisableDefaultRegistryMutation,
		rand:            opts.Rand,
	}
	caller := gojmespath.NewFunctionCaller()
	for _, f := range functions {
		if f.builtin() {
			continue
		}
		// Arguments are declared "any" so that go-jmespath only checks the
		// count; checkArgs checks the types with go-jmespath's message and
		// also accepts non-float64 numbers (int, json.Number) in data.
		specs := make([]gojmespath.ArgSpec, len(f.Args))
		for i := range specs {
			specs[i] = gojmespath.ArgSpec{Types: []gojmespath.JpType{gojmespath.JpAny}}
		}
		caller.Register(gojmespath.FunctionEntry{Name: f.Name, Arguments: specs, Handler: handler(f, e)})
	}
	for _, b := range cappedBuiltins {
		caller.Register(b)
	}
	return &Interpreter{caller: caller}
}

func handler(f function, e *env) gojmespath.JpFunction {
	return func(args []any) (result any, err error) {
		defer func() {
			if r := recover(); r != nil {
				result, err = nil, &panicError{function: f.Name, value: r}
			}
		}()
		if err := checkArgs(f, args); err != nil {
			return nil, err
		}
		result, err = f.Impl(e, args)
		if err != nil {
			return nil, err
		}
		if err := capResult(f.Name, result); err != nil {
			return nil, err
		}
		return result, nil
	}
}

// panicError is a panic recovered during Search. function is the Kyverno
// function that panicked, or "" for a panic inside go-jmespath itself
// (for example merge() of a non-object, which crashes Kyverno).
type panicError struct {
	function string
	value    any
}

func (p *panicError) Error() string {
	if p.function == "" {
		return fmt.Sprintf("JMESPath evaluation panic: %v", p.value)
	}
	return fmt.Sprintf("JMESPath function '%s': panic: %v", p.function, p.value)
}

// Search evaluates q against data. The result of a query that can repeat
// parts of its input ([a, a], {x: @, y: @}) holds at most MaxResultNodes
// values, or Search fails with a *LimitError.
//
// A path that does not exist yields an error for which IsNotFound is true
// (Code engine.CodeVariableNotResolved), as in Kyverno; every other failure
// is Code engine.CodeEvaluation. Messages are Kyverno's. Errors have no
// Path. Search never panics.
func (i *Interpreter) Search(q *Query, data any) (result any, err error) {
	if q.shares {
		return i.searchShared(q, data)
	}
	switch {
	case q.simple:
		if v, ok := walkPath(q.path, data); ok {
			return v, nil
		}
	case q.or:
		if v, ok := walkOr(q.path, q.literal, data); ok {
			return v, nil
		}
	case q.compiled != nil:
		if v, ok := evalCompiled(q.compiled, i.caller, data); ok {
			return v, nil
		}
	}
	return i.search(q, data)
}

// searchShared is Search of a query whose fanout is above one: the
// compiled form or the interpreter, then the size of the result checked
// against MaxResultNodes.
func (i *Interpreter) searchShared(q *Query, data any) (any, error) {
	v, ok := any(nil), false
	if q.compiled != nil {
		v, ok = evalCompiled(q.compiled, i.caller, data)
	}
	if !ok {
		var err error
		if v, err = i.search(q, data); err != nil {
			return nil, err
		}
	}
	if n, ok := resultNodes(v, MaxResultNodes); !ok {
		err := resultError(n)
		return nil, &engine.Error{Code: engine.CodeEvaluation, Message: err.Error(), Err: err}
	}
	return v, nil
}

// search evaluates q with go-jmespath's interpreter.
func (i *Interpreter) search(q *Query, data any) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			p := &panicError{value: r}
			result, err = nil, &engine.Error{Code: engine.CodeEvaluation, Message: p.Error(), Err: p}
		}
	}()
	v, err := gojmespath.NewInterpreter().Execute(q.ast, data, gojmespath.WithFunctionCaller(i.caller))
	if err != nil {
		code := engine.CodeEvaluation
		if IsNotFound(err) {
			code = engine.CodeVariableNotResolved
		}
		return nil, &engine.Error{Code: code, Message: err.Error(), Err: err}
	}
	return v, nil
}

// Missing reports whether q is a simple path (field names and indexes)
// with a key missing in data: Search would fail with an error for which
// IsNotFound is true. It is false for every other query.
func (q *Query) Missing(data any) bool {
	if !q.simple {
		return false
	}
	_, outcome := walkSteps(q.path, data)
	return outcome == missing
}

// IsNotFound reports whether err is (or wraps) go-jmespath's NotFoundError,
// returned when a field of the path is missing.
func IsNotFound(err error) bool {
	var nf gojmespath.NotFoundError
	return errors.As(err, &nf)
}
