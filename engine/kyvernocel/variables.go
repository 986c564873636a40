package kyvernocel

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// VariableNames are the names of a policy's variables in the order they
// are declared: made once when the policy compiles, shared by its
// evaluations. A name declared twice is one variable, the last
// declaration's, as in Kyverno (which keeps the compiled variables in a
// map by name).
type VariableNames struct {
	names    []string       // distinct names, in the order of first declaration
	index    map[string]int // name → index of its last declaration
	declared int            // declarations
}

// NewVariableNames returns the names of the variables declared in this
// order.
func NewVariableNames(declared []string) *VariableNames {
	n := &VariableNames{index: make(map[string]int, len(declared)), declared: len(declared)}
	for i, name := range declared {
		if _, ok := n.index[name]; !ok {
			n.names = append(n.names, name)
		}
		n.index[name] = i
	}
	return n
}

// variablesTypeValue is the runtime type of `variables`, as
// lazy.NewMapValue makes it for VariablesType (types.NewObjectType is
// cel-go's replacement of the NewTypeValue it calls: the same type for a
// name that is not a well-known type).
var variablesTypeValue = types.NewObjectType(VariablesType.TypeName(), traits.IndexerType|traits.FieldTesterType|traits.IterableType)

// varState is where a variable's evaluation stands.
type varState uint8

const (
	varPending varState = iota
	varEvaluating
	varDone
)

// Variables is the value of `variables` in one evaluation: each variable
// is evaluated when an expression first reads it, at most once. It
// behaves as Kyverno's, k8s.io/apiserver/pkg/cel/lazy.MapValue (the same
// lookups, Size, iteration, conversions and errors), without its costs
// per evaluation: the names are resolved through VariableNames, made when
// the policy compiles, and a name is unescaped (apiservercel.Unescape)
// only when it can hold an escape sequence. A variable read while it is
// being evaluated (a variable whose expression reads its own name, which
// Kyverno's lazy map recurses on until the process runs out of stack) is
// an error.
//
// Reset prepares it for an evaluation, so that one Variables serves the
// evaluations of a request one after the other without allocating. It is
// used by one goroutine at a time.
type Variables struct {
	names  *VariableNames
	eval   VariableEvaluator
	values []ref.Val
	state  []varState
}

// VariableEvaluator evaluates the variables of an evaluation.
type VariableEvaluator interface {
	// EvalVariable returns the value of the variable of declaration i
	// (an error is a value: types.Err).
	EvalVariable(i int) ref.Val
}

// VariableFunc is a VariableEvaluator.
type VariableFunc func(i int) ref.Val

// EvalVariable implements VariableEvaluator.
func (f VariableFunc) EvalVariable(i int) ref.Val { return f(i) }

// minVariables is the room Reset makes for variables when it allocates.
const minVariables = 8

// Reset makes v the variables named by names, none evaluated yet, which
// eval evaluates.
func (v *Variables) Reset(names *VariableNames, eval VariableEvaluator) {
	v.names, v.eval = names, eval
	n := 0
	if names != nil {
		n = names.declared
	}
	if cap(v.values) < n {
		// Room for the variables of the next policies too.
		v.values = make([]ref.Val, n, max(n, minVariables))
		v.state = make([]varState, n, max(n, minVariables))
		return
	}
	v.values = v.values[:n]
	v.state = v.state[:n]
	clear(v.values)
	clear(v.state)
}

// resolve returns the value of the variable of declaration i, evaluating
// it the first time.
func (v *Variables) resolve(name string, i int) ref.Val {
	switch v.state[i] {
	case varDone:
		return v.values[i]
	case varEvaluating:
		return types.NewErr("variable %q is read by its own expression", name)
	}
	v.state[i] = varEvaluating
	val := v.eval.EvalVariable(i)
	v.values[i], v.state[i] = val, varDone
	return val
}

// Find implements traits.Mapper as lazy.MapValue.Find does: the key is
// unescaped (apiservercel.Unescape) before the lookup; a name that does
// not unescape is not found.
func (v *Variables) Find(key ref.Val) (ref.Val, bool) {
	n, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(n), true
	}
	name := string(n)
	// Unescape only replaces sequences of the form __x__: a name without
	// "__" is its own unescaped form, and is never refused.
	if strings.Contains(name, "__") {
		if name, ok = apiservercel.Unescape(name); !ok {
			return nil, false
		}
	}
	if v.names == nil {
		return nil, false
	}
	i, ok := v.names.index[name]
	if !ok {
		return nil, false
	}
	return v.resolve(name, i), true
}

// Get implements traits.Indexer.
func (v *Variables) Get(key ref.Val) ref.Val {
	if val, found := v.Find(key); found {
		return val
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// Contains implements traits.Container.
func (v *Variables) Contains(key ref.Val) ref.Val {
	val, found := v.Find(key)
	if val != nil && types.IsUnknownOrError(val) {
		return val
	}
	return types.Bool(found)
}

// Size implements traits.Sizer: the number of variables.
func (v *Variables) Size() ref.Val {
	if v.names == nil {
		return types.Int(0)
	}
	return types.Int(len(v.names.names))
}

// Iterator implements traits.Iterable. As lazy.MapValue's, it yields the
// values of the variables (not their names), in the order of declaration.
func (v *Variables) Iterator() traits.Iterator { return &variablesIterator{parent: v} }

// ConvertToNative implements ref.Val: no conversion is allowed.
func (v *Variables) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion from %q to %q", variablesTypeValue.TypeName(), typeDesc.Name())
}

// ConvertToType implements ref.Val: only to its own type and to type.
func (v *Variables) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case variablesTypeValue:
		return v
	case types.TypeType:
		return variablesTypeValue
	}
	return types.NewErr("disallowed conversion from %q to %q", variablesTypeValue.TypeName(), typeVal.TypeName())
}

// Equal implements ref.Val: the same Variables only.
func (v *Variables) Equal(other ref.Val) ref.Val {
	o, ok := other.(*Variables)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v == o)
}

// Type implements ref.Val.
func (v *Variables) Type() ref.Type { return variablesTypeValue }

// Value implements ref.Val: there is no native value.
func (v *Variables) Value() any { return types.NoSuchOverloadErr() }

var (
	_ ref.Val       = (*Variables)(nil)
	_ traits.Mapper = (*Variables)(nil)
)

type variablesIterator struct {
	parent *Variables
	index  int
}

func (i *variablesIterator) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion to %q", typeDesc.Name())
}

func (i *variablesIterator) ConvertToType(typeValue ref.Type) ref.Val {
	return types.NewErr("disallowed conversion o %q", typeValue.TypeName())
}

func (i *variablesIterator) Equal(other ref.Val) ref.Val {
	o, ok := other.(*variablesIterator)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(o == i)
}

func (i *variablesIterator) Type() ref.Type { return types.IteratorType }

func (i *variablesIterator) Value() any { return nil }

func (i *variablesIterator) HasNext() ref.Val {
	return types.Bool(i.parent.names != nil && i.index < len(i.parent.names.names))
}

func (i *variablesIterator) Next() ref.Val {
	ret := i.parent.Get(types.String(i.parent.names.names[i.index]))
	i.index++
	return ret
}

var _ traits.Iterator = (*variablesIterator)(nil)
