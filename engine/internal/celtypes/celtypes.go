package celtypes

import (
	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// OrValueCompat is Kyverno's backward-compatible orValue
// (pkg/cel/compiler.OrValueCompatEnvOptions): x.orValue(y) returns x when x
// is not an optional, as cel-go before v0.28 did.
func OrValueCompat() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Macros(cel.ReceiverMacro("orValue", 1, func(eh cel.MacroExprFactory, target celast.Expr, args []celast.Expr) (celast.Expr, *cel.Error) {
			return eh.NewCall("__orValueCompat__", target, args[0]), nil
		})),
		cel.Function("__orValueCompat__",
			cel.Overload("__orValueCompat___dyn_dyn",
				[]*cel.Type{cel.DynType, cel.DynType},
				cel.DynType,
				cel.BinaryBinding(func(lhs, rhs ref.Val) ref.Val {
					switch v := lhs.(type) {
					case *types.Optional:
						if v.HasValue() {
							return v.GetValue()
						}
						return rhs
					case *types.Err:
						return rhs
					default:
						return lhs
					}
				}),
			),
		),
	}
}

// RequestType is the type of `request`: Kubernetes' AdmissionRequest
// (k8s.io/apiserver/pkg/admission/plugin/cel.BuildRequestType, copied so
// that the engine does not import the admission plugin machinery), with
// the extra fields given (Kyverno's request type adds object and
// oldObject, see RequestObjects).
func RequestType(extra ...*apiservercel.DeclField) *apiservercel.DeclType {
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
	return apiservercel.NewObjectType("kubernetes.AdmissionRequest", fields(append([]*apiservercel.DeclField{
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
	}, extra...)...))
}

// RequestObjects are the fields Kyverno's request type adds to
// Kubernetes': object and oldObject.
func RequestObjects() []*apiservercel.DeclField {
	return []*apiservercel.DeclField{
		field("object", apiservercel.DynType, false),
		field("oldObject", apiservercel.DynType, false),
	}
}

// NamespaceType is the type of `namespaceObject`, Kubernetes'
// BuildNamespaceType.
func NamespaceType() *apiservercel.DeclType {
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

// UserInfo is the requester of an admission request (authentication/v1
// UserInfo), as both CEL evaluators take it.
type UserInfo struct {
	Username string
	UID      string
	Groups   []string
	Extra    map[string][]string
}

// Object is u as Kubernetes converts it to JSON for CEL (through the
// unstructured converter): omitted fields are absent, so has() tells them
// apart.
func (u UserInfo) Object() map[string]any {
	out := map[string]any{}
	if u.Username != "" {
		out["username"] = u.Username
	}
	if u.UID != "" {
		out["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		groups := make([]any, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = g
		}
		out["groups"] = groups
	}
	if len(u.Extra) > 0 {
		extra := make(map[string]any, len(u.Extra))
		for k, vs := range u.Extra {
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			extra[k] = list
		}
		out["extra"] = extra
	}
	return out
}

// RequestObject is the part of an admission request's JSON form for CEL
// (Kubernetes' AdmissionRequest through the unstructured converter) that
// both evaluators build alike: an empty uid, kind and requestKind (a
// {group, version, kind} map), resource and requestResource (a {group,
// version, resource} map), the operation, the requester's Object, dryRun
// and null options. The callers add the fields they have (name,
// namespace, object, ...); omitted fields stay absent, so has() tells
// them apart.
func RequestObject(kind, resource map[string]any, operation string, user UserInfo, dryRun bool) map[string]any {
	return map[string]any{
		"uid":             "",
		"kind":            kind,
		"resource":        resource,
		"requestKind":     kind,
		"requestResource": resource,
		"operation":       operation,
		"userInfo":        user.Object(),
		"dryRun":          dryRun,
		"options":         nil,
	}
}
