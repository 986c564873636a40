package kyvernocel

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
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
	// varNow is what time.now() reads (see nowMacro).
	varNow = "verdict_time_now"
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

// requestType is the type of `request`: Kubernetes' AdmissionRequest
// (k8s.io/apiserver/pkg/admission/plugin/cel.BuildRequestType, copied so
// that the engine does not import the admission plugin machinery) with
// object and oldObject, as Kyverno's BuildRequestType adds them.
func requestType() *apiservercel.DeclType {
	gvkType := apiservercel.NewObjectType("kubernetes.GroupVersionKind", fields(
		field("group", apiservercel.StringType, true),
		field("version", apiservercel.StringType, true),
		field("kind", apiservercel.StringType, true),
	))
	gvrType := apiservercel.NewObjectType("kubernetes.GroupVersionResource", fields(
		field("group", apiservercel.StringType, true),
		field("version", apiservercel.StringType, true),
		field("resource", apiservercel.StringType, true),
	))
	userInfoType := apiservercel.NewObjectType("kubernetes.UserInfo", fields(
		field("username", apiservercel.StringType, false),
		field("uid", apiservercel.StringType, false),
		field("groups", apiservercel.NewListType(apiservercel.StringType, -1), false),
		field("extra", apiservercel.NewMapType(apiservercel.StringType, apiservercel.NewListType(apiservercel.StringType, -1), -1), false),
	))
	return apiservercel.NewObjectType("kubernetes.AdmissionRequest", fields(
		field("kind", gvkType, true),
		field("resource", gvrType, true),
		field("subResource", apiservercel.StringType, false),
		field("requestKind", gvkType, true),
		field("requestResource", gvrType, true),
		field("requestSubResource", apiservercel.StringType, false),
		field("name", apiservercel.StringType, true),
		field("namespace", apiservercel.StringType, false),
		field("operation", apiservercel.StringType, true),
		field("userInfo", userInfoType, true),
		field("dryRun", apiservercel.BoolType, false),
		field("options", apiservercel.DynType, false),
		field("object", apiservercel.DynType, false),
		field("oldObject", apiservercel.DynType, false),
	))
}

// namespaceType is the type of `namespaceObject`, Kubernetes'
// BuildNamespaceType.
func namespaceType() *apiservercel.DeclType {
	specType := apiservercel.NewObjectType("kubernetes.NamespaceSpec", fields(
		field("finalizers", apiservercel.NewListType(apiservercel.StringType, -1), true),
	))
	conditionType := apiservercel.NewObjectType("kubernetes.NamespaceCondition", fields(
		field("status", apiservercel.StringType, true),
		field("type", apiservercel.StringType, true),
		field("lastTransitionTime", apiservercel.TimestampType, true),
		field("message", apiservercel.StringType, true),
		field("reason", apiservercel.StringType, true),
	))
	statusType := apiservercel.NewObjectType("kubernetes.NamespaceStatus", fields(
		field("conditions", apiservercel.NewListType(conditionType, -1), true),
		field("phase", apiservercel.StringType, true),
	))
	metadataType := apiservercel.NewObjectType("kubernetes.NamespaceMetadata", fields(
		field("name", apiservercel.StringType, true),
		field("generateName", apiservercel.StringType, true),
		field("namespace", apiservercel.StringType, true),
		field("labels", apiservercel.NewMapType(apiservercel.StringType, apiservercel.StringType, -1), true),
		field("annotations", apiservercel.NewMapType(apiservercel.StringType, apiservercel.StringType, -1), true),
		field("UID", apiservercel.StringType, true),
		field("creationTimestamp", apiservercel.TimestampType, true),
		field("deletionGracePeriodSeconds", apiservercel.IntType, true),
		field("deletionTimestamp", apiservercel.TimestampType, true),
		field("generation", apiservercel.IntType, true),
		field("resourceVersion", apiservercel.StringType, true),
		field("finalizers", apiservercel.NewListType(apiservercel.StringType, -1), true),
	))
	return apiservercel.NewObjectType("kubernetes.Namespace", fields(
		field("metadata", metadataType, true),
		field("spec", specType, true),
		field("status", statusType, true),
	))
}

func field(name string, t *apiservercel.DeclType, required bool) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, required, nil, nil)
}

func fields(fs ...*apiservercel.DeclField) map[string]*apiservercel.DeclField {
	out := make(map[string]*apiservercel.DeclField, len(fs))
	for _, f := range fs {
		out[f.Name] = f
	}
	return out
}
