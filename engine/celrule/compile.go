package celrule

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/engine/match"
)

// Spec is what a validate.cel rule is compiled from.
type Spec struct {
	// Preconditions are the rule's celPreconditions.
	Preconditions []kyverno.MatchCondition
	// CEL is validate.cel.
	CEL *kyverno.CEL
	// Message is validate.message: the message of the expressions that
	// have none.
	Message string
	// Deferred compiles the expressions when the rule is first evaluated
	// (once, safe for concurrent evaluations) instead of in Compile: for a
	// short-lived run, such as the CLI's, where many rules are never
	// evaluated. Compile reports the same problems either way, since an
	// expression that does not compile is reported when it is evaluated
	// (Kyverno accepts the policy); a long-lived host leaves it false, so
	// that no evaluation pays for a compilation.
	Deferred bool
}

// Rule is a compiled validate.cel rule. It is immutable and safe for
// concurrent use.
type Rule struct {
	preconditions []*precondition
	variables     []*variable
	validations   []*validation
	annotations   []*compiled
	varsType      *apiservercel.DeclType
	// noVariables is the `variables` of a rule without variables: an
	// empty map, which nothing writes, shared by every evaluation.
	noVariables *lazy.MapValue
	// messages is set when an expression has a messageExpression.
	messages bool

	// Params is set when the rule has both paramKind and paramRef: it is
	// then evaluated once per params resource.
	Params *Params

	// deferred holds the expressions of a rule compiled with
	// Spec.Deferred until its first evaluation (nil otherwise).
	deferred *deferredParts
}

// deferredParts are the expressions of a Spec.Deferred rule, compiled into
// the rule once, by the first evaluation.
type deferredParts struct {
	once  sync.Once
	parts ruleParts
	envs  *ruleEnvs
}

// ready compiles the expressions of a Spec.Deferred rule, once; the
// evaluations wait for it.
func (r *Rule) ready() {
	if d := r.deferred; d != nil {
		d.once.Do(func() {
			r.compileExpressions(d.envs, d.parts)
			d.parts = ruleParts{}
		})
	}
}

// Params are validate.cel.paramKind and paramRef.
type Params struct {
	APIVersion, Kind string
	// Name and Namespace are paramRef.name and paramRef.namespace.
	Name, Namespace string
	// Selector is paramRef.selector (nil when unset).
	Selector *match.Selector
	// DenyNotFound is paramRef.parameterNotFoundAction: Deny.
	DenyNotFound bool
}

// compiled is one expression: a program, or the error Kubernetes' compiler
// gives for it (reported when the expression is evaluated, as Kyverno
// does: a CEL rule that does not compile fails on every resource).
type compiled struct {
	expr    string
	prog    cel.Program
	err     *apiservercel.Error
	outType *cel.Type
}

type precondition struct {
	name string
	compiled
}

type variable struct {
	name string
	compiled
}

type validation struct {
	expression string
	message    string
	compiled
	messageExpr *compiled // nil without messageExpression
}

// Compile compiles a validate.cel rule. path locates validate.cel in the
// policy ("spec.rules[0].validate.cel"); errors carry paths below it.
//
// Expressions that do not compile or have the wrong type are not errors
// here: Kyverno accepts such a policy and fails the rule on every resource
// with Kubernetes' message ("compilation error: ..."), and so does Evaluate.
// Compile rejects only what Kyverno's policy validation rejects.
func Compile(spec Spec, path string) (*Rule, error) {
	c := spec.CEL
	if c == nil {
		return nil, engine.Errorf(engine.CodeInvalidPolicy, path, "validate.cel is empty")
	}
	errs := check(c, path)
	r := &Rule{}
	if c.ParamKind != nil && c.ParamRef != nil {
		p, perrs := params(c, path)
		errs = append(errs, perrs...)
		r.Params = p
	}
	parts := ruleParts{message: spec.Message}
	for _, v := range c.Variables {
		parts.variables = append(parts.variables, NamedExpression{v.Name, v.Expression})
	}
	for _, p := range spec.Preconditions {
		parts.conditions = append(parts.conditions, NamedExpression{p.Name, p.Expression})
	}
	for _, e := range c.Expressions {
		parts.validations = append(parts.validations, Validation{Expression: e.Expression, Message: e.Message, MessageExpression: e.MessageExpression})
	}
	for _, a := range c.AuditAnnotations {
		parts.annotations = append(parts.annotations, a.ValueExpression)
	}
	for i, v := range c.Variables {
		if v.Name == "" {
			errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, fmt.Sprintf("%s.variables[%d].name", path, i), "a variable needs a name"))
		}
	}
	if err := r.compileParts(parts, r.Params != nil, true, spec.Deferred); err != nil {
		return nil, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path, Message: err.Error(), Err: err}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// ruleParts are the expressions a Rule is compiled from, whatever their
// source: validate.cel or a ValidatingAdmissionPolicy.
type ruleParts struct {
	conditions  []NamedExpression
	variables   []NamedExpression
	validations []Validation
	annotations []string
	// message is the message of the validations that have none.
	message string
}

// compileParts compiles every expression into r, as Kubernetes'
// composited compiler does: variables first, each extending the type of
// `variables` (so later expressions, later variables included, see the
// earlier ones' types), then the conditions, validations (bool),
// messageExpressions (string, without authorizer) and audit annotations
// (string or null). An expression that does not compile keeps its error
// in r (compiled.err). authorizer declares authorizer for everything but
// messageExpressions. With deferred, the environments are made now (their
// error is compileParts's) and the expressions by the first evaluation
// (Rule.ready).
func (r *Rule) compileParts(parts ruleParts, hasParams, authorizer, deferred bool) error {
	var envs *ruleEnvs
	var err error
	if len(parts.variables) == 0 {
		envs, err = sharedRuleEnvsOf(envKey{hasParams, authorizer})
	} else {
		envs, err = newRuleEnvs(hasParams, authorizer)
	}
	if err != nil {
		return err
	}
	r.varsType = envs.variables
	for _, v := range parts.validations {
		r.messages = r.messages || v.MessageExpression != ""
	}
	if len(parts.variables) == 0 {
		r.noVariables = lazy.NewMapValue(r.varsType.CelType())
	}
	if deferred {
		r.deferred = &deferredParts{parts: parts, envs: envs}
		return nil
	}
	r.compileExpressions(envs, parts)
	return nil
}

// compileExpressions compiles the expressions of parts into r
// (compileParts).
func (r *Rule) compileExpressions(envs *ruleEnvs, parts ruleParts) {
	for _, v := range parts.variables {
		cv := &variable{name: v.Name, compiled: compileExpr(envs.full, v.Expression)}
		envs.variables.Fields[v.Name] = apiservercel.NewDeclField(v.Name, declTypeOf(cv.outType), true, nil, nil)
		r.variables = append(r.variables, cv)
	}
	for _, p := range parts.conditions {
		r.preconditions = append(r.preconditions, &precondition{name: p.Name, compiled: compileExpr(envs.full, p.Expression, cel.BoolType)})
	}
	for _, e := range parts.validations {
		v := &validation{expression: e.Expression, message: e.Message, compiled: compileExpr(envs.full, e.Expression, cel.BoolType)}
		if v.message == "" {
			v.message = parts.message
		}
		if e.MessageExpression != "" {
			m := compileExpr(envs.message, e.MessageExpression, cel.StringType)
			v.messageExpr = &m
		}
		r.validations = append(r.validations, v)
	}
	for _, a := range parts.annotations {
		m := compileExpr(envs.full, a, cel.StringType, cel.NullType)
		r.annotations = append(r.annotations, &m)
	}
}

// check is Kyverno's validation of validate.cel (pkg/policy/validate):
// required fields, and paramKind and paramRef together.
func check(c *kyverno.CEL, path string) engine.Errors {
	var errs engine.Errors
	bad := func(p, msg string) { errs = append(errs, engine.Errorf(engine.CodeInvalidPolicy, path+p, msg)) }
	for i, e := range c.Expressions {
		if e.Expression == "" {
			bad(fmt.Sprintf(".expressions[%d].expression", i), "cel.expressions.expression is required")
		}
	}
	if k := c.ParamKind; k != nil {
		if k.APIVersion == "" {
			bad(".paramKind.apiVersion", "cel.paramKind.apiVersion is required")
		}
		if k.Kind == "" {
			bad(".paramKind.kind", "cel.paramKind.kind is required")
		}
		if c.ParamRef == nil {
			bad(".paramRef", "cel.paramRef is required")
		}
	}
	if ref := c.ParamRef; ref != nil {
		name, _ := ref["name"].(string)
		_, hasSelector := ref["selector"]
		if (name == "") == !hasSelector {
			bad(".paramRef", "one of cel.paramRef.name or cel.paramRef.selector must be set")
		}
		if _, ok := ref["parameterNotFoundAction"]; !ok {
			bad(".paramRef.parameterNotFoundAction", "cel.paramRef.parameterNotFoundAction is required")
		}
		if c.ParamKind == nil {
			bad(".paramKind", "cel.paramKind is required")
		}
	}
	for i, a := range c.AuditAnnotations {
		if a.Key == "" {
			bad(fmt.Sprintf(".auditAnnotations[%d].key", i), "cel.auditAnnotation.key is required")
		}
		if a.ValueExpression == "" {
			bad(fmt.Sprintf(".auditAnnotations[%d].valueExpression", i), "cel.auditAnnotation.valueExpression is required")
		}
	}
	return errs
}

// CompileErrors returns the messages of the expressions that did not
// compile, for diagnostics.
func (r *Rule) CompileErrors() []string {
	r.ready()
	var out []string
	add := func(c *compiled) {
		if c != nil && c.err != nil {
			out = append(out, c.expr+": "+c.err.Error())
		}
	}
	for _, p := range r.preconditions {
		add(&p.compiled)
	}
	for _, v := range r.variables {
		add(&v.compiled)
	}
	for _, v := range r.validations {
		add(&v.compiled)
		add(v.messageExpr)
	}
	for _, a := range r.annotations {
		add(a)
	}
	return out
}

func params(c *kyverno.CEL, path string) (*Params, engine.Errors) {
	var errs engine.Errors
	p := &Params{APIVersion: c.ParamKind.APIVersion, Kind: c.ParamKind.Kind}
	for k, v := range c.ParamRef {
		fpath := path + ".paramRef." + k
		switch k {
		case "name", "namespace", "parameterNotFoundAction":
			s, ok := v.(string)
			if !ok {
				errs = append(errs, engine.Errorf(engine.CodeDecode, fpath, "must be a string"))
				continue
			}
			switch k {
			case "name":
				p.Name = s
			case "namespace":
				p.Namespace = s
			default:
				p.DenyNotFound = s == "Deny"
			}
		case "selector":
			raw, err := labelSelector(v, fpath)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			sel, serr := match.CompileSelector(raw, fpath)
			if serr != nil {
				errs = append(errs, engine.As(serr)...)
				continue
			}
			p.Selector = sel
		default:
			errs = append(errs, engine.Errorf(engine.CodeDecode, fpath, "unknown field"))
		}
	}
	return p, errs
}

func labelSelector(v any, path string) (*kyverno.LabelSelector, *engine.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, engine.Errorf(engine.CodeDecode, path, "must be a label selector")
	}
	sel := &kyverno.LabelSelector{}
	for k, v := range m {
		switch k {
		case "matchLabels":
			labels, ok := v.(map[string]any)
			if !ok {
				return nil, engine.Errorf(engine.CodeDecode, path+".matchLabels", "must be a map of strings")
			}
			sel.MatchLabels = map[string]string{}
			for lk, lv := range labels {
				s, ok := lv.(string)
				if !ok {
					return nil, engine.Errorf(engine.CodeDecode, path+".matchLabels."+lk, "must be a string")
				}
				sel.MatchLabels[lk] = s
			}
		case "matchExpressions":
			list, ok := v.([]any)
			if !ok {
				return nil, engine.Errorf(engine.CodeDecode, path+".matchExpressions", "must be a list")
			}
			for i, e := range list {
				epath := fmt.Sprintf("%s.matchExpressions[%d]", path, i)
				em, ok := e.(map[string]any)
				if !ok {
					return nil, engine.Errorf(engine.CodeDecode, epath, "must be an object")
				}
				var req kyverno.LabelSelectorRequirement
				req.Key, _ = em["key"].(string)
				req.Operator, _ = em["operator"].(string)
				if vals, ok := em["values"].([]any); ok {
					for _, v := range vals {
						s, ok := v.(string)
						if !ok {
							return nil, engine.Errorf(engine.CodeDecode, epath+".values", "must be a list of strings")
						}
						req.Values = append(req.Values, s)
					}
				}
				sel.MatchExpressions = append(sel.MatchExpressions, req)
			}
		default:
			return nil, engine.Errorf(engine.CodeDecode, path+"."+k, "unknown field")
		}
	}
	return sel, nil
}

// compileExpr compiles one expression as Kubernetes' CompileCELExpression
// does: the result type must be one of want (any type when want is empty).
func compileExpr(env *cel.Env, expr string, want ...*cel.Type) compiled {
	out := compiled{expr: expr}
	fail := func(t apiservercel.ErrorType, detail string) compiled {
		out.err = &apiservercel.Error{Type: t, Detail: detail}
		return out
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		return fail(apiservercel.ErrorTypeInvalid, "compilation failed: "+issues.String())
	}
	if len(want) > 0 {
		found := false
		for _, t := range want {
			if ast.OutputType().IsExactType(t) || cel.AnyType.IsExactType(t) {
				found = true
				break
			}
		}
		if !found {
			var reason string
			if len(want) == 1 {
				reason = fmt.Sprintf("must evaluate to %v but got %v", want[0].String(), ast.OutputType().String())
			} else {
				reason = fmt.Sprintf("must evaluate to one of %v but got %v", want, ast.OutputType().String())
			}
			return fail(apiservercel.ErrorTypeInvalid, reason)
		}
	}
	if _, err := cel.AstToCheckedExpr(ast); err != nil {
		return fail(apiservercel.ErrorTypeInternal, "unexpected compilation error: "+err.Error())
	}
	prog, err := env.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return fail(apiservercel.ErrorTypeInternal, "program instantiation failed: "+err.Error())
	}
	out.prog = prog
	out.outType = ast.OutputType()
	return out
}

// scalarDeclTypes are the declared types of CEL's scalar types.
var scalarDeclTypes = map[*cel.Type]*apiservercel.DeclType{
	cel.AnyType:       apiservercel.AnyType,
	cel.BoolType:      apiservercel.BoolType,
	cel.BytesType:     apiservercel.BytesType,
	cel.DoubleType:    apiservercel.DoubleType,
	cel.DurationType:  apiservercel.DurationType,
	cel.IntType:       apiservercel.IntType,
	cel.NullType:      apiservercel.NullType,
	cel.StringType:    apiservercel.StringType,
	cel.TimestampType: apiservercel.TimestampType,
	cel.UintType:      apiservercel.UintType,
}

// declTypeOf is Kubernetes' convertCelTypeToDeclType: the declared type of
// a variable from the type its expression returns.
func declTypeOf(t *cel.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	if d, ok := scalarDeclTypes[t]; ok {
		return d
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		params := t.Parameters()
		switch len(params) {
		case 1:
			return apiservercel.NewListType(declTypeOf(params[0]), -1)
		case 2:
			return apiservercel.NewMapType(declTypeOf(params[0]), declTypeOf(params[1]), -1)
		}
	}
	return apiservercel.DynType
}
