package kyvernocel

import (
	"context"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/verdict-policy/verdict/engine/kyvernocel/internal/libs"
)

// Activation holds the variables of one evaluation. Build it with
// NewActivation; it is used by one goroutine at a time.
type Activation struct {
	// Object, OldObject, Request and NamespaceObject are the values of
	// those variables (JSON values: maps, slices, strings, float64 or
	// int64, bool, nil).
	Object, OldObject, Request, NamespaceObject any
	// Variables is the `variables` map; nil leaves `variables` undefined
	// (match conditions, which run before variables exist).
	Variables *lazy.MapValue

	exceptions any // nil: `exceptions` is undefined (SetExceptions)
	now        types.Timestamp
	libs       *contexts
}

// NewActivation returns an activation whose libraries read sources with
// ctx, and whose time.now() is now.
func NewActivation(ctx context.Context, sources Sources, now time.Time) *Activation {
	return NewLibraries(ctx, sources).NewActivation(now)
}

// Libraries are the values of the library variables for the evaluations
// of one request: build them once and share them between its
// activations.
type Libraries struct{ c *contexts }

// NewLibraries returns the libraries of sources, read with ctx.
func NewLibraries(ctx context.Context, sources Sources) *Libraries {
	return &Libraries{c: newContexts(ctx, sources)}
}

// NewActivation returns an activation with these libraries, whose
// time.now() is now.
func (l *Libraries) NewActivation(now time.Time) *Activation {
	return &Activation{libs: l.c, now: types.Timestamp{Time: now}}
}

// NewVariables returns an empty `variables` map, to Append the policy's
// variables to.
func NewVariables() *lazy.MapValue { return lazy.NewMapValue(VariablesType) }

// SetExceptions defines `exceptions`: the images and values the
// PolicyExceptions that match the resource allow (empty lists when none).
func (a *Activation) SetExceptions(allowedImages, allowedValues []string) {
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
		return a.libs.resource, true
	case varHTTP:
		return a.libs.http, true
	case varImageData:
		return a.libs.image, true
	case varGlobalContext:
		return a.libs.globalContext, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }
