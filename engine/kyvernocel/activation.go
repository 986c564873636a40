package kyvernocel

import (
	"context"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"github.com/kyverno/sdk/extensions/cel/libs/generator"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/verdict-policy/verdict/engine/kyvernocel/internal/libs"
)

// Activation holds the variables of one evaluation. Build it with
// NewActivation, or Reset one to reuse it; it is used by one goroutine at
// a time.
type Activation struct {
	// Object, OldObject, Request and NamespaceObject are the values of
	// those variables (JSON values: maps, slices, strings, float64 or
	// int64, bool, nil).
	Object, OldObject, Request, NamespaceObject any
	// RequestFunc, when set, gives the value of `request` instead of
	// Request, when an expression reads it: a request that no expression
	// reads is never built. It is called at every read; it keeps the
	// value it builds.
	RequestFunc func() any
	// Variables is the `variables` map: a *Variables (Reset for each
	// policy, as engine/vpol does), or a lazy map of NewVariables that
	// BindVariable fills; nil leaves `variables` undefined (match
	// conditions, which run before variables exist).
	Variables ref.Val
	// Images, Attestors and Attestations are the values of the variables
	// of an ImageValidatingPolicy (NewImageEnv); ImageFunctions answers
	// its image verification calls (nil: they fail with
	// ErrNoImageFunctions).
	Images, Attestors, Attestations any
	ImageFunctions                  ImageFunctions

	exceptions any // nil: `exceptions` is undefined (SetExceptions)
	now        types.Timestamp
	libs       *Libraries
	// policy is the policy evaluated (SetPolicy); own are the library
	// values whose calls carry it in their context, made on first use.
	policy *PolicyRef
	own    *contexts
	// generator receives generator.Apply's calls (SetGenerator).
	generator generator.ContextInterface
}

// NewActivation returns an activation whose libraries read sources with
// ctx, and whose time.now() is now.
func NewActivation(ctx context.Context, sources Sources, now time.Time) *Activation {
	return NewLibraries(ctx, sources).NewActivation(now)
}

// Libraries are the values of the library variables for the evaluations
// of one request: build them once and share them between its
// activations, used by one goroutine at a time. They are made when an
// expression first reads one of them.
type Libraries struct {
	ctx     context.Context
	sources Sources
	c       *contexts
}

// NewLibraries returns the libraries of sources, read with ctx.
func NewLibraries(ctx context.Context, sources Sources) *Libraries {
	return &Libraries{ctx: ctx, sources: sources}
}

// contexts returns the libraries' values, made on first use (those of no
// source for an activation without libraries).
func (l *Libraries) contexts() *contexts {
	if l == nil {
		return noContexts
	}
	if l.c == nil {
		l.c = newContexts(l.ctx, l.sources)
	}
	return l.c
}

// NewActivation returns an activation with these libraries, whose
// time.now() is now.
func (l *Libraries) NewActivation(now time.Time) *Activation {
	a := &Activation{}
	a.Reset(l, now)
	return a
}

// PolicyRef names the policy whose expression calls a data source.
type PolicyRef struct {
	// Kind is ValidatingPolicy or NamespacedValidatingPolicy.
	Kind string
	// Namespace is the policy's namespace ("" for a cluster-wide one).
	Namespace, Name string
}

type policyKey struct{}

// CallingPolicy returns the policy whose expression makes a data source
// call with ctx, when the engine named it (Activation.SetPolicy): a host
// can refuse calls by policy (Kyverno refuses http.* in namespaced
// policies unless told otherwise).
func CallingPolicy(ctx context.Context) (PolicyRef, bool) {
	p, ok := ctx.Value(policyKey{}).(PolicyRef)
	return p, ok
}

// SetPolicy names the policy evaluated with a: the calls its expressions
// make to the data sources carry it in their context (CallingPolicy). p
// must not change afterwards (a compiled policy holds its own).
func (a *Activation) SetPolicy(p *PolicyRef) {
	a.policy, a.own = p, nil
}

// contexts returns the library values of a: those of its Libraries, or
// for a named policy, values whose calls carry it (made once, on the
// first library the expressions read).
func (a *Activation) contexts() *contexts {
	if a.policy == nil {
		return a.libs.contexts()
	}
	if a.own == nil {
		a.own = newContexts(context.WithValue(a.libs.ctx, policyKey{}, *a.policy), a.libs.sources)
	}
	return a.own
}

// SetGenerator makes g receive the generator.Apply calls of the
// expressions evaluated with the activation (a GeneratingPolicy's
// environment, NewGeneratingEnv).
func (a *Activation) SetGenerator(g generator.ContextInterface) { a.generator = g }

// NewVariables returns an empty lazy `variables` map, to BindVariable the
// policy's variables to.
func NewVariables() *lazy.MapValue { return lazy.NewMapValue(VariablesType) }

// BindVariable adds the variable name to a.Variables (a lazy map of
// NewVariables, made when it is not one): prog, evaluated with the activation the first time
// an expression reads it; an error is the variable's value.
func (a *Activation) BindVariable(ctx context.Context, name string, prog cel.Program) {
	m, ok := a.Variables.(*lazy.MapValue)
	if !ok {
		m = NewVariables()
		a.Variables = m
	}
	m.Append(name, func(*lazy.MapValue) ref.Val {
		val, _, err := prog.ContextEval(ctx, a)
		switch {
		case val != nil:
			return val
		case err != nil:
			return types.WrapErr(err)
		}
		return nil
	})
}

// Reset makes a an activation with libs, whose time.now() is now, and no
// other variable set, for a new evaluation.
func (a *Activation) Reset(libs *Libraries, now time.Time) {
	*a = Activation{libs: libs, now: types.Timestamp{Time: now}}
}

// noExceptions is `exceptions` when no PolicyException hands images or
// values to the expressions (expressions only read it).
var noExceptions any = libs.Exception{AllowedImages: []string{}, AllowedValues: []string{}}

// SetExceptions defines `exceptions`: the images and values the
// PolicyExceptions that match the resource allow (empty lists when none).
func (a *Activation) SetExceptions(allowedImages, allowedValues []string) {
	if allowedImages == nil && allowedValues == nil {
		a.exceptions = noExceptions
		return
	}
	if allowedImages == nil {
		allowedImages = []string{}
	}
	if allowedValues == nil {
		allowedValues = []string{}
	}
	a.exceptions = libs.Exception{AllowedImages: allowedImages, AllowedValues: allowedValues}
}

// ResolveName implements interpreter.Activation.
func (a *Activation) ResolveName(name string) (any, bool) {
	switch name {
	case VarObject:
		return a.Object, true
	case VarOldObject:
		return a.OldObject, true
	case VarRequest:
		if a.RequestFunc != nil {
			return a.RequestFunc(), true
		}
		return a.Request, true
	case VarNamespaceObject:
		return a.NamespaceObject, true
	case VarVariables:
		if a.Variables == nil {
			return nil, false
		}
		return a.Variables, true
	case VarExceptions:
		if a.exceptions == nil {
			return nil, false
		}
		return a.exceptions, true
	case varNow:
		return a.now, true
	case VarImages:
		return a.Images, a.Images != nil
	case VarAttestors:
		return a.Attestors, a.Attestors != nil
	case VarAttestations:
		return a.Attestations, a.Attestations != nil
	case varImageFuncs:
		return imageFuncsVal{a.ImageFunctions}, true
	case varResource:
		return a.contexts().resource, true
	case varHTTP:
		return a.contexts().http, true
	case varImageData:
		return a.contexts().image, true
	case varGenerator:
		if a.generator == nil {
			return nil, false
		}
		return generator.Context{ContextInterface: a.generator}, true
	case varGlobalContext:
		return a.contexts().globalContext, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }
