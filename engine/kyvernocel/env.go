package kyvernocel

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/kyverno/sdk/extensions/cel/libs/generator"
	"github.com/kyverno/sdk/extensions/cel/libs/globalcontext"
	"github.com/kyverno/sdk/extensions/cel/libs/gzip"
	"github.com/kyverno/sdk/extensions/cel/libs/hash"
	"github.com/kyverno/sdk/extensions/cel/libs/http"
	"github.com/kyverno/sdk/extensions/cel/libs/image"
	"github.com/kyverno/sdk/extensions/cel/libs/imagedata"
	"github.com/kyverno/sdk/extensions/cel/libs/json"
	"github.com/kyverno/sdk/extensions/cel/libs/math"
	"github.com/kyverno/sdk/extensions/cel/libs/random"
	"github.com/kyverno/sdk/extensions/cel/libs/resource"
	celtime "github.com/kyverno/sdk/extensions/cel/libs/time"
	"github.com/kyverno/sdk/extensions/cel/libs/transform"
	"github.com/kyverno/sdk/extensions/cel/libs/user"
	"github.com/kyverno/sdk/extensions/cel/libs/x509"
	"github.com/kyverno/sdk/extensions/cel/libs/yaml"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"

	"github.com/verdict-policy/verdict/engine/internal/celtypes"
	"github.com/verdict-policy/verdict/engine/kyvernocel/internal/libs"
)

// CostLimit is the runtime cost limit of one expression: Kubernetes'
// PerCallLimit (1,000,000), which the base environment sets on every
// program, as in Kyverno. An expression over it fails with "operation
// cancelled: actual cost limit exceeded".
const CostLimit = celconfig.PerCallLimit

// The parser's limits on one expression: cel-go's defaults, which
// Kyverno uses, set explicitly. An expression over one does not compile
// (its policy is refused with the expression's path).
const (
	// MaxExpressionSize is the length of an expression, in code points.
	MaxExpressionSize = 100_000
	// MaxExpressionDepth is the nesting depth of an expression.
	MaxExpressionDepth = 250
	// MaxExpressionNodes is the number of nodes of an expression, macro
	// expansions included.
	MaxExpressionNodes = 100_000
)

// InterruptCheckFrequency is how often, in comprehension iterations, an
// evaluation checks its context.Context: a cancelled or expired context
// stops a long expression (with "operation interrupted").
const InterruptCheckFrequency = 100

// compilerVersion is the compatibility version of Kyverno's policy
// compilers (vpolCompilerVersion): every option of the base environment
// is in the StoredExpressions set anyway.
var compilerVersion = version.MajorMinor(1, 0)

// decls are the types of request and namespaceObject, built once.
var decls = sync.OnceValues(func() (*apiservercel.DeclType, *apiservercel.DeclType) {
	return celtypes.RequestType(celtypes.RequestObjects()...), celtypes.NamespaceType()
})

// exceptionsType is the type of `exceptions` (Kyverno's libs.Exception).
var exceptionsType = types.NewObjectType("libs.Exception")

// Env is the CEL environment of one policies.kyverno.io policy, as
// Kyverno's policy compilers build it (createBaseVpolEnv): Kubernetes'
// base environment (every library of the StoredExpressions set and its
// cost limit), Kyverno's options (cel-go's ext libraries, optionals,
// cross-type numeric comparison, the orValue compatibility), the
// variables object, oldObject, request, namespaceObject, variables and
// exceptions, and Kyverno's libraries from github.com/kyverno/sdk
// (resource, http, image, imagedata, globalContext, user, hash, math,
// json, yaml, random, x509, time, transform, gzip).
//
// An Env is made per policy because `variables` has the types of the
// policy's own variables: RegisterVariable adds each one as it compiles.
// Until the first, the policy compiles in its namespace's shared
// environment (whose `variables` has no field), and only the first
// extends it with the policy's own (an Extend copies every declaration,
// and each environment binds its functions again for its first program).
// An expression compiled again with the same variables (the autogen
// variants of a policy repeat its expressions that do not name object)
// gives the program compiled the first time.
// It is not safe for concurrent use while compiling; the programs it
// makes are.
type Env struct {
	env *cel.Env
	// vars are the policy's variables; nil before the first, while env
	// is the shared environment.
	vars *variablesProvider
	// err is the error of that Extend, returned by the next Compile.
	err error
	// compiled are the expressions compiled since the variables last
	// changed: at most one per expression of the policy, gone with the
	// Env.
	compiled map[string]compiledExpr
}

// compiledExpr is an expression that compiled, and its type.
type compiledExpr struct {
	prog cel.Program
	out  *cel.Type
}

// NewEnv builds the environment of a policy of namespace ("" for a
// cluster-scoped policy: the resource library of a namespaced policy reads
// its own namespace only, as the sdk's library does).
func NewEnv(namespace string) (*Env, error) {
	return newEnv(envKey{namespace: namespace})
}

// NewGeneratingEnv builds the environment of a GeneratingPolicy of
// namespace, as Kyverno's gpol compiler extends NewEnv's: the sdk's
// generator library (generator.Apply(namespace, [objects]), or
// generator.Apply([objects]) in a namespaced policy's environment, which
// generates in its own namespace). Its `generator` reads the
// Activation's generator (Activation.SetGenerator); without one a call is
// an error.
func NewGeneratingEnv(namespace string) (*Env, error) {
	return newEnv(envKey{namespace: namespace, generating: true})
}

// NewMutatingEnv builds the environment of a MutatingPolicy of namespace,
// as Kyverno's mpol compiler extends NewEnv's: Kubernetes' mutation types
// (Object, whose literals Object{...} and Object.<field path>{...} hold
// any field, and JSONPatch{op, path, from, value}) and the jsonpatch
// library (jsonpatch.escapeKey).
func NewMutatingEnv(namespace string) (*Env, error) {
	return newEnv(envKey{namespace: namespace, mutating: true})
}

// NewImageEnv builds the environment of an ImageValidatingPolicy of
// namespace, as Kyverno's ivpol compiler extends NewEnv's: the variables
// images, attestors and attestations, and the kyverno.imageverify
// functions (verifyImageSignatures, verifyAttestationSignatures,
// extractPayload, getImageData), answered by Activation.ImageFunctions.
func NewImageEnv(namespace string) (*Env, error) {
	return newEnv(envKey{namespace: namespace, images: true})
}

// envKey names a shared environment: the namespace of its policies, and
// whether it has the mutation types or the image verification ones.
type envKey struct {
	namespace  string
	mutating   bool
	images     bool
	generating bool
}

func newEnv(key envKey) (*Env, error) {
	shared, err := sharedEnv(key)
	if err != nil {
		return nil, err
	}
	return &Env{env: shared}, nil
}

// maxSharedEnvs bounds the environments kept by namespace and kind (one per
// namespace of a namespaced policy, and one for cluster-scoped policies,
// for validating and for mutating policies); past it, environments are
// built for each policy.
const maxSharedEnvs = 64

var (
	sharedMu   sync.Mutex
	sharedEnvs = map[envKey]*cel.Env{}
)

// sharedEnv is the environment of every policy of a namespace, before the
// types of its variables: built once per namespace (the resource library
// of a namespaced policy is bound to its namespace) and kind of policy.
func sharedEnv(key envKey) (*cel.Env, error) {
	sharedMu.Lock()
	env, ok := sharedEnvs[key]
	sharedMu.Unlock()
	if ok {
		return env, nil
	}
	env, err := buildEnv(key)
	if err != nil {
		return nil, err
	}
	sharedMu.Lock()
	if len(sharedEnvs) < maxSharedEnvs {
		sharedEnvs[key] = env
	}
	sharedMu.Unlock()
	return env, nil
}

// buildEnv extends the StoredExpressions environment of Kubernetes' base
// environment set as Kyverno's createBaseVpolEnv extends the set (only the
// StoredExpressions environment is used to compile), and for a mutating
// environment as Kyverno's mpol compiler does.
func buildEnv(key envKey) (*cel.Env, error) {
	namespace := key.namespace
	base := environment.MustBaseEnvSet(compilerVersion)
	stored, err := base.Env(environment.StoredExpressions)
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	reqType, nsType := decls()
	declOpts, err := apiservercel.NewDeclTypeProvider(nsType, reqType).EnvOptions(stored.CELTypeProvider())
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	opts := append(defaultEnvOptions(),
		cel.ParserExpressionSizeLimit(MaxExpressionSize),
		cel.ParserRecursionLimit(MaxExpressionDepth),
		cel.ExpressionNodeLimit(MaxExpressionNodes),
		cel.Variable(VarNamespaceObject, nsType.CelType()),
		cel.Variable(VarObject, cel.DynType),
		cel.Variable(VarOldObject, cel.DynType),
		cel.Variable(VarRequest, reqType.CelType()),
		cel.Types(nsType.CelType()),
		cel.Types(reqType.CelType()),
		cel.Variable(VarVariables, VariablesType),
		cel.Variable(varNow, cel.TimestampType),
	)
	if key.mutating {
		// Kyverno's mpol compiler registers them with the request's
		// types, before the libraries' native types.
		opts = append(opts, cel.Types(ObjectType, JSONPatchType))
	}
	opts = append(opts, declOpts...)
	// The libraries' data sources are the host's, per evaluation
	// (Activation): the values bound here answer "no data source".
	opts = append(opts,
		ext.NativeTypes(reflect.TypeFor[libs.Exception](), ext.ParseStructTags(true)),
		cel.Variable(VarExceptions, exceptionsType),
		globalcontext.Lib(noContexts.globalContext, globalcontext.Latest()),
		resource.Lib(noContexts.resource, namespace, resource.Latest()),
		image.Lib(image.Latest()),
		imagedata.Lib(noContexts.image, imagedata.Latest(), nil),
		user.Lib(user.Latest()),
		hash.Lib(hash.Latest()),
		math.Lib(math.Latest()),
		json.Lib(&json.JsonImpl{}, json.Latest()),
		yaml.Lib(&yaml.YamlImpl{}, yaml.Latest()),
		random.Lib(random.Latest()),
		x509.Lib(x509.Latest()),
		celtime.Lib(celtime.Latest()),
		transform.Lib(transform.Latest()),
		gzip.Lib(gzip.Latest()),
		http.Lib(noContexts.http, http.Latest()),
		// time.now() reads the evaluation's clock (Activation), not the
		// process's.
		cel.Macros(cel.ReceiverMacro("now", 0, nowMacro)),
	)
	if key.generating {
		opts = append(opts, generator.Lib(generator.Context{ContextInterface: noGenerator{}}, namespace, generator.Latest()))
	}
	if key.mutating {
		opts = append(opts,
			library.JSONPatch(),
			// Object and JSONPatch resolve before the other types, as
			// in Kubernetes' mutating admission policies.
			common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
		)
	}
	if key.images {
		opts = append(opts, imageEnvOptions()...)
	}
	env, err := stored.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	// `variables` with no field yet, as in each policy's environment
	// before its first variable (RegisterVariable).
	env, err = env.Extend(cel.CustomTypeProvider(newVariablesProvider(newMemoProvider(env.CELTypeProvider()))))
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	// Initialize the checker now, so that the policies that extend the
	// environment concurrently only read it.
	if _, iss := env.Compile("true"); iss.Err() != nil {
		return nil, fmt.Errorf("CEL environment: %w", iss.Err())
	}
	return env, nil
}

// CEL returns the cel.Env, to compile expressions with.
func (e *Env) CEL() *cel.Env { return e.env }

// RegisterVariable gives `variables.<name>` the type t for the
// expressions compiled after it.
func (e *Env) RegisterVariable(name string, t *cel.Type) {
	if e.vars == nil {
		if e.err != nil {
			return
		}
		vars := newVariablesProvider(e.env.CELTypeProvider())
		env, err := e.env.Extend(cel.CustomTypeProvider(vars))
		if err != nil {
			e.err = fmt.Errorf("CEL environment: %w", err)
			return
		}
		e.env, e.vars = env, vars
	}
	if old, ok := e.vars.fields[name]; !ok || !old.IsExactType(t) {
		e.compiled = nil
	}
	e.vars.register(name, t)
}

// Compile compiles an expression and checks that its type is one of want
// (any type when want is empty). The error is the compiler's message, or
// "output is expected to be of type ..." as Kyverno words it.
func (e *Env) Compile(expr string, want ...*cel.Type) (cel.Program, *cel.Type, error) {
	if e.err != nil {
		return nil, nil, e.err
	}
	c, cached := e.compiled[expr]
	var ast *cel.Ast
	if !cached {
		var iss *cel.Issues
		ast, iss = e.env.Compile(expr)
		if err := iss.Err(); err != nil {
			return nil, nil, err
		}
		c.out = ast.OutputType()
	}
	if len(want) > 0 {
		ok := false
		for _, w := range want {
			if c.out.IsExactType(w) {
				ok = true
				break
			}
		}
		if !ok {
			if len(want) == 2 {
				return nil, nil, fmt.Errorf("output is expected to be either of type %s or %s", want[0].TypeName(), want[1].TypeName())
			}
			return nil, nil, fmt.Errorf("output is expected to be of type %s", want[0].TypeName())
		}
	}
	if !cached {
		prog, err := e.env.Program(ast, cel.InterruptCheckFrequency(InterruptCheckFrequency))
		if err != nil {
			return nil, nil, err
		}
		c.prog = prog
		if e.compiled == nil {
			e.compiled = map[string]compiledExpr{}
		}
		e.compiled[expr] = c
	}
	return c.prog, c.out, nil
}

// defaultEnvOptions are Kyverno's DefaultEnvOptionsWithCompat
// (pkg/cel/compiler): cel-go's and Kubernetes' libraries at the versions
// of Kubernetes' base environment, and the orValue compatibility.
func defaultEnvOptions() []cel.EnvOption {
	return append([]cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Bindings(),
		ext.Encoders(),
		ext.Lists(ext.ListsVersion(3)),
		ext.Math(),
		ext.Protos(),
		ext.Sets(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Regex(ext.RegexVersion(1)),
		library.CIDR(),
		library.Format(),
		library.IP(),
		library.Lists(),
		library.Regex(),
		library.URLs(),
		library.Quantity(),
		library.SemverLib(library.SemverVersion(1)),
	}, celtypes.OrValueCompat()...)
}

// nowMacro rewrites time.now() into a read of the evaluation's clock.
func nowMacro(eh cel.MacroExprFactory, target celast.Expr, _ []celast.Expr) (celast.Expr, *cel.Error) {
	if target == nil || target.Kind() != celast.IdentKind || target.AsIdent() != "time" {
		return nil, nil
	}
	return eh.NewIdent(varNow), nil
}

// SharedEnvs returns the environments kept for the whole process (one per
// namespace of the policies compiled so far, at most maxSharedEnvs).
// Compiled policies reference them without owning them: a host that
// measures the memory of compiled policies leaves them out.
func SharedEnvs() []*cel.Env {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	out := make([]*cel.Env, 0, len(sharedEnvs))
	for _, e := range sharedEnvs {
		out = append(out, e)
	}
	return out
}
