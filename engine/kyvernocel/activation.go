package kyvernocel

import (
	"context"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"

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
	// Variables is the `variables` map; nil leaves `variables` undefined
	// (match conditions, which run before variables exist).
	Variables *Variables

	exceptions any // nil: `exceptions` is undefined (SetExceptions)
	now        types.Timestamp
	libs       *Libraries
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
	case varResource:
		return a.libs.contexts().resource, true
	case varHTTP:
		return a.libs.contexts().http, true
	case varImageData:
		return a.libs.contexts().image, true
	case varGlobalContext:
		return a.libs.contexts().globalContext, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }
