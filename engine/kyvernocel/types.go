package kyvernocel

import (
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
