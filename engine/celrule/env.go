package celrule

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// The variables of a validate.cel expression, named as in Kubernetes'
// ValidatingAdmissionPolicy.
const (
	varObject          = "object"
	varOldObject       = "oldObject"
	varParams          = "params"
	varRequest         = "request"
	varNamespace       = "namespaceObject"
	varAuthorizer      = "authorizer"
	varRequestResource = "authorizer.requestResource"
	varVariables       = "variables"
	variablesTypeName  = "kubernetes.variables"
)

// kyvernoEnv is Kubernetes' base CEL environment (all libraries, the
// StoredExpressions set, Kubernetes' cost limits) with Kyverno's orValue
// compatibility macro. It is built once and never changed; every rule
// extends it.
var kyvernoEnv = sync.OnceValues(func() (*environment.EnvSet, error) {
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	return base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        orValueCompat(),
	})
})

// admissionEnvs are Kyverno's environment with the admission variables
// declared, for rules without and with params, with and without
// authorizer. They are built once and never changed.
var admissionEnvs = sync.OnceValues(func() (map[envKey]*cel.Env, error) {
	base, err := kyvernoEnv()
	if err != nil {
		return nil, err
	}
	out := map[envKey]*cel.Env{}
	for _, params := range []bool{false, true} {
		for _, authz := range []bool{false, true} {
			set, err := extendAdmission(base, params, authz)
			if err != nil {
				return nil, err
			}
			env, err := set.Env(environment.StoredExpressions)
			if err != nil {
				return nil, err
			}
			out[envKey{params, authz}] = env
		}
	}
	return out, nil
})

type envKey struct{ params, authorizer bool }

// ruleEnvs are the environments of one rule: full for preconditions,
// variables, validations and audit annotations (with authorizer), message
// for messageExpressions (without it), as Kyverno compiles them. Both
// declare `variables` with the rule's own type, whose fields are added as
// the rule's variables compile.
type ruleEnvs struct {
	full, message *cel.Env
	variables     *apiservercel.DeclType
}

func newRuleEnvs(hasParams bool) (*ruleEnvs, error) {
	envs, err := admissionEnvs()
	if err != nil {
		return nil, err
	}
	out := &ruleEnvs{variables: apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{})}
	if out.full, err = withVariables(envs[envKey{hasParams, true}], out.variables); err != nil {
		return nil, err
	}
	if out.message, err = withVariables(envs[envKey{hasParams, false}], out.variables); err != nil {
		return nil, err
	}
	return out, nil
}

// withVariables declares `variables` of type vars in env, as Kubernetes'
// NewCompositedCompiler does through EnvSet.Extend (for the
// StoredExpressions environment only, the one Kyverno compiles with).
func withVariables(env *cel.Env, vars *apiservercel.DeclType) (*cel.Env, error) {
	provider := apiservercel.NewDeclTypeProvider(vars)
	provider.SetRecognizeKeywordAsFieldName(true)
	opts, err := provider.EnvOptions(env.CELTypeProvider())
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	opts = append(opts, cel.Variable(varVariables, vars.CelType()))
	out, err := env.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	return out, nil
}

// extendAdmission declares the admission variables as Kubernetes'
// createEnvForOpts does (k8s.io/apiserver/pkg/admission/plugin/cel).
func extendAdmission(base *environment.EnvSet, hasParams, hasAuthorizer bool) (*environment.EnvSet, error) {
	requestType, namespaceType := requestDeclType(), namespaceDeclType()
	opts := []cel.EnvOption{
		cel.Variable(varObject, cel.DynType),
		cel.Variable(varOldObject, cel.DynType),
		cel.Variable(varNamespace, namespaceType.CelType()),
		cel.Variable(varRequest, requestType.CelType()),
	}
	if hasParams {
		opts = append(opts, cel.Variable(varParams, cel.DynType))
	}
	if hasAuthorizer {
		opts = append(opts,
			cel.Variable(varAuthorizer, library.AuthorizerType),
			cel.Variable(varRequestResource, library.ResourceCheckType))
	}
	env, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         []*apiservercel.DeclType{namespaceType, requestType},
	}, environment.StrictCostOpt)
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	return env, nil
}

// orValueCompat is Kyverno's backward-compatible orValue
// (pkg/cel/compiler.OrValueCompatEnvOptions): x.orValue(y) returns x when x
// is not an optional, as cel-go before v0.28 did.
func orValueCompat() []cel.EnvOption {
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

// requestDeclType is the type of request, Kubernetes' BuildRequestType
// (k8s.io/apiserver/pkg/admission/plugin/cel), copied so that this package
// does not import the admission plugin machinery.
func requestDeclType() *apiservercel.DeclType {
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
	))
}

// namespaceDeclType is the type of namespaceObject, Kubernetes'
// BuildNamespaceType.
func namespaceDeclType() *apiservercel.DeclType {
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
