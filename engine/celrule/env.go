package celrule

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/verdict-policy/verdict/engine/internal/celtypes"
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
		EnvOptions:        celtypes.OrValueCompat(),
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
	admissionBuilt.Store(true)
	return out, nil
})

// admissionBuilt is set once admissionEnvs are built.
var admissionBuilt atomic.Bool

type envKey struct{ params, authorizer bool }

// ruleEnvs are the environments of one rule: full for preconditions,
// variables, validations and audit annotations (with authorizer for
// validate.cel, without for a ValidatingAdmissionPolicy), message for
// messageExpressions (without it), as Kyverno compiles them. Both
// declare `variables` with the rule's own type, whose fields are added as
// the rule's variables compile.
type ruleEnvs struct {
	full, message *cel.Env
	variables     *apiservercel.DeclType
}

func newRuleEnvs(hasParams, authorizer bool) (*ruleEnvs, error) {
	envs, err := admissionEnvs()
	if err != nil {
		return nil, err
	}
	out := &ruleEnvs{variables: apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{})}
	if out.full, err = withVariables(envs[envKey{hasParams, authorizer}], out.variables); err != nil {
		return nil, err
	}
	if out.message, err = withVariables(envs[envKey{hasParams, false}], out.variables); err != nil {
		return nil, err
	}
	return out, nil
}

// sharedRuleEnvs are the environments of the rules without variables,
// per (hasParams, authorizer): their `variables` has no field and is
// never changed, so that they are built once and shared by every such
// rule (a rule's own envs cost an Extend of the whole declaration set
// each, and the function bindings of each program's first use). At most
// four, one per key.
var (
	sharedRuleMu   sync.Mutex
	sharedRuleEnvs = map[envKey]*ruleEnvs{}
)

// sharedRuleEnvsOf returns the shared environments of the rules without
// variables, built the first time.
func sharedRuleEnvsOf(key envKey) (*ruleEnvs, error) {
	sharedRuleMu.Lock()
	defer sharedRuleMu.Unlock()
	if envs, ok := sharedRuleEnvs[key]; ok {
		return envs, nil
	}
	envs, err := newRuleEnvs(key.params, key.authorizer)
	if err != nil {
		return nil, err
	}
	sharedRuleEnvs[key] = envs
	return envs, nil
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
	requestType, namespaceType := celtypes.RequestType(), celtypes.NamespaceType()
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

// SharedEnvs returns the environments built once for the whole process
// (the admission environments every rule extends, and those the rules
// without variables share), or nil before the
// first rule with CEL is compiled. Compiled rules reference them without owning
// them: a host that measures the memory of compiled policies leaves them
// out.
func SharedEnvs() []*cel.Env {
	if !admissionBuilt.Load() {
		return nil
	}
	envs, err := admissionEnvs()
	if err != nil {
		return nil
	}
	out := make([]*cel.Env, 0, len(envs))
	for _, e := range envs {
		out = append(out, e)
	}
	sharedRuleMu.Lock()
	defer sharedRuleMu.Unlock()
	for _, e := range sharedRuleEnvs {
		out = append(out, e.full, e.message)
	}
	return out
}
