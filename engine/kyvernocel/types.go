package kyvernocel

import (
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apiserver/pkg/cel/mutation"
)

// The variables of a policies.kyverno.io expression (Kyverno's
// pkg/cel/compiler keys).
const (
	VarObject          = "object"
	VarOldObject       = "oldObject"
	VarRequest         = "request"
	VarNamespaceObject = "namespaceObject"
	VarVariables       = "variables"
	VarExceptions      = "exceptions"

	// The library contexts: the data sources the host supplies.
	varResource      = "resource"
	varHTTP          = "http"
	varImageData     = "image"
	varGlobalContext = "globalContext"
	// varGenerator is the generator library's context (NewGeneratingEnv).
	varGenerator = "generator"
	// varNow is what time.now() reads (see nowMacro).
	varNow = "verdict_time_now"
)

// The types of the results of mutations (NewMutatingEnv): an
// ApplyConfiguration expression is an Object, a JSONPatch expression a
// list of JSONPatch.
var (
	ObjectType    = types.NewObjectType(mutation.ObjectTypeName)
	JSONPatchType = types.NewObjectType(mutation.JSONPatchTypeName)
)

// VariablesType is the type of `variables`, whose fields are the policy's
// variables with the types their expressions have (Kyverno's
// kyverno.variables).
var VariablesType = types.NewObjectType("kyverno.variables")

var variablesTypeType = types.NewTypeTypeWithParam(VariablesType)

// variablesProvider resolves the fields of VariablesType: each variable is
// registered with its type as it compiles, so later expressions see the
// variables before them (Kyverno's VariablesProvider).
type variablesProvider struct {
	inner  types.Provider
	fields map[string]*types.Type
	names  []string
}

func newVariablesProvider(inner types.Provider) *variablesProvider {
	return &variablesProvider{inner: inner, fields: map[string]*types.Type{}}
}

func (p *variablesProvider) register(name string, t *types.Type) {
	if _, ok := p.fields[name]; !ok {
		p.names = append(p.names, name)
	}
	p.fields[name] = t
}

func (p *variablesProvider) EnumValue(enumName string) ref.Val { return p.inner.EnumValue(enumName) }

func (p *variablesProvider) FindIdent(identName string) (ref.Val, bool) {
	return p.inner.FindIdent(identName)
}

func (p *variablesProvider) FindStructType(structType string) (*types.Type, bool) {
	if structType == VariablesType.DeclaredTypeName() {
		return variablesTypeType, true
	}
	return p.inner.FindStructType(structType)
}

func (p *variablesProvider) FindStructFieldNames(structType string) ([]string, bool) {
	if structType == VariablesType.DeclaredTypeName() {
		return p.names, true
	}
	return p.inner.FindStructFieldNames(structType)
}

func (p *variablesProvider) FindStructFieldType(structType, fieldName string) (*types.FieldType, bool) {
	if structType == VariablesType.DeclaredTypeName() {
		if t, ok := p.fields[fieldName]; ok {
			return &types.FieldType{Type: t}, true
		}
		return nil, false
	}
	return p.inner.FindStructFieldType(structType, fieldName)
}

func (p *variablesProvider) NewValue(structType string, fields map[string]ref.Val) ref.Val {
	return p.inner.NewValue(structType, fields)
}

// MaxMemoTypeNames bounds the type names a shared environment's
// memoProvider remembers (each a name the checker looked up, found or
// not); the lookups of other names go to the libraries' providers.
const MaxMemoTypeNames = 4096

// memoProvider remembers the answers of the providers of a shared
// environment (sharedEnv), which never change once it is built, to the
// lookups by type name. Each sdk library registers its Go types with
// ext.NativeTypes, whose provider asks the provider below it twice for a
// name it does not know (cel-go v0.30 nativeTypeProvider.FindStructType
// and FindStructFieldNames): with the libraries stacked, a name that is
// not a type (the checker asks for every prefix of a qualified
// identifier, "object.spec") costs 2^libraries lookups. It is safe for
// concurrent use.
type memoProvider struct {
	types.Provider
	mu         sync.RWMutex
	structs    map[string]memoAnswer[*types.Type]
	fieldNames map[string]memoAnswer[[]string]
}

// memoAnswer is a provider's answer to a lookup by name.
type memoAnswer[V any] struct {
	v  V
	ok bool
}

func newMemoProvider(inner types.Provider) *memoProvider {
	return &memoProvider{Provider: inner, structs: map[string]memoAnswer[*types.Type]{}, fieldNames: map[string]memoAnswer[[]string]{}}
}

func (p *memoProvider) FindStructType(structType string) (*types.Type, bool) {
	return memoLookup(p, p.structs, structType, p.Provider.FindStructType)
}

func (p *memoProvider) FindStructFieldNames(structType string) ([]string, bool) {
	return memoLookup(p, p.fieldNames, structType, p.Provider.FindStructFieldNames)
}

// memoLookup answers name from m, or asks find and remembers its answer
// while p holds fewer than MaxMemoTypeNames answers in all.
func memoLookup[V any](p *memoProvider, m map[string]memoAnswer[V], name string, find func(string) (V, bool)) (V, bool) {
	p.mu.RLock()
	a, found := m[name]
	p.mu.RUnlock()
	if found {
		return a.v, a.ok
	}
	v, ok := find(name)
	p.mu.Lock()
	if len(p.structs)+len(p.fieldNames) < MaxMemoTypeNames {
		m[name] = memoAnswer[V]{v, ok}
	}
	p.mu.Unlock()
	return v, ok
}
