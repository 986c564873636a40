package vpol

import (
	"fmt"

	"github.com/google/cel-go/cel"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Problems collects what is wrong with a policy of the group while it
// compiles, for the other kinds (engine/gpol, engine/dpol): every problem
// is an *engine.Error with its path.
type Problems struct {
	Errs engine.Errors
}

// Invalid records a problem of Code engine.CodeInvalidPolicy at path.
func (p *Problems) Invalid(path, format string, args ...any) {
	p.Errs = append(p.Errs, engine.Errorf(engine.CodeInvalidPolicy, path, fmt.Sprintf(format, args...)))
}

// Expression compiles one expression at path whose type must be one of
// want (CompileExpression), records its problem, and returns it with its
// type (dyn when it does not compile, so that the expressions that use a
// variable report their own problems only). An empty text compiles to
// nothing: the caller reports it where the field is required.
func (p *Problems) Expression(env *kyvernocel.Env, text, path string, want ...*cel.Type) (cel.Program, *cel.Type) {
	if text == "" {
		return nil, cel.DynType
	}
	prog, t, err := CompileExpression(env, text, path, want...)
	if err != nil {
		p.Errs = append(p.Errs, err)
	}
	return prog, t
}

// Err is nil without problems, else every problem (sorted by path) of the
// policy kind/name.
func (p *Problems) Err(kind, name string) error {
	if len(p.Errs) == 0 {
		return nil
	}
	return fmt.Errorf("compile %s %q: %w", kind, name, p.Errs.Err())
}
