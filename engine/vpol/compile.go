package vpol

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
	policiesv1 "github.com/kyverno/api/api/policies.kyverno.io/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
)

// Validation actions.
const (
	ActionDeny  = string(admissionregistrationv1.Deny)
	ActionWarn  = string(admissionregistrationv1.Warn)
	ActionAudit = string(admissionregistrationv1.Audit)
)

// Policy is a compiled ValidatingPolicy or NamespacedValidatingPolicy. It
// is immutable and safe for concurrent use.
type Policy struct {
	doc  *Document
	hash string
	// ref names the policy to the data sources its expressions call.
	ref kyvernocel.PolicyRef

	// Mode is spec.evaluation.mode: ModeKubernetes (default) or ModeJSON.
	Mode string
	// Admission and Background are spec.evaluation.admission.enabled and
	// spec.evaluation.background.enabled (default true).
	Admission, Background bool
	// Actions are spec.validationActions (default [Deny]).
	Actions []string
	// FailurePolicyIgnore is spec.failurePolicy: Ignore (default Fail):
	// a match condition that errors then skips the policy.
	FailurePolicyIgnore bool

	variants []*Variant
}

// Variant is the policy as written, or one of its autogen variants for
// pod controllers: Kyverno evaluates each as a policy of its own (with the
// policy's name).
type Variant struct {
	// Autogen is "" for the policy as written, or the autogen
	// configuration (AutogenDefaults, AutogenCronJobs).
	Autogen string
	// Targets are the controllers of an autogen variant.
	Targets []Target

	spec            *policiesv1.ValidatingPolicySpec
	match           *matcher
	matchConditions []cel.Program
	variables       []*expr
	varNames        *kyvernocel.VariableNames
	validations     []*validation
	auditAnnots     AuditAnnotations
}

// MatchConstraints returns the variant's spec.matchConstraints. Callers
// must not modify it.
func (v *Variant) MatchConstraints() *admissionregistrationv1.MatchResources {
	return v.spec.MatchConstraints
}

// DropsUnmatched reports whether Kyverno's CLI drops the response of this
// variant for a resource it does not match (its constraints are a single
// plain resource rule); it keeps an empty response otherwise.
func (v *Variant) DropsUnmatched() bool { return hasSelector(v.spec.MatchConstraints) }

// expr is one compiled expression with its name (a variable, a match
// condition, an audit annotation's key).
type expr struct {
	name string
	path string
	prog cel.Program
}

type validation struct {
	expr
	message     string
	messageExpr cel.Program // nil without messageExpression
}

// Document returns the policy as written. Callers must not modify it.
func (p *Policy) Document() *Document { return p.doc }

// Name is metadata.name.
func (p *Policy) Name() string { return p.doc.Metadata.Name }

// Namespace is metadata.namespace of a NamespacedValidatingPolicy ("" for a
// ValidatingPolicy).
func (p *Policy) Namespace() string {
	if !p.doc.Namespaced() {
		return ""
	}
	return p.doc.Metadata.Namespace
}

// Kind is ValidatingPolicy or NamespacedValidatingPolicy.
func (p *Policy) Kind() string { return p.doc.Kind }

// Hash is the SHA-256 of the policy's kind, name, namespace, annotations
// and spec, hex encoded.
func (p *Policy) Hash() string { return p.hash }

// Variants returns the policy as written followed by its autogen
// variants. Callers must not modify them.
func (p *Policy) Variants() []*Variant { return p.variants }

// Compile checks doc and compiles it: every expression once, the autogen
// variants for pod controllers too. It returns every problem found, as
// engine.Errors sorted by path (Code engine.CodeInvalidPolicy, or
// engine.CodeUnsupported for an evaluation mode this engine lacks); the
// path of a problem of an autogen variant starts with
// "autogen[<configuration>]".
func Compile(doc *Document) (*Policy, error) {
	var c compiler
	return Compiled(c.policy(doc), &c.Problems, doc.Kind, doc.Metadata.Name)
}

type compiler struct {
	Problems
}

func (c *compiler) errorf(code engine.Code, path, format string, args ...any) {
	c.Errs = append(c.Errs, engine.Errorf(code, path, fmt.Sprintf(format, args...)))
}

func (c *compiler) policy(doc *Document) *Policy {
	spec := &doc.Spec
	p := &Policy{
		doc:        doc,
		Mode:       spec.EvaluationMode(),
		Admission:  spec.AdmissionEnabled(),
		Background: spec.BackgroundEnabled(),
	}
	p.hash = hashOf(doc)
	p.ref = kyvernocel.PolicyRef{Kind: doc.Kind, Namespace: p.Namespace(), Name: doc.Metadata.Name}
	c.Identity(doc.Kind, &doc.Metadata, doc.Namespaced())
	switch p.Mode {
	case ModeKubernetes, ModeJSON:
	case "HTTP", "Envoy":
		c.errorf(engine.CodeUnsupported, "spec.evaluation.mode", "evaluation mode %s is not supported yet", p.Mode)
	default:
		c.errorf(engine.CodeInvalidPolicy, "spec.evaluation.mode", "unknown evaluation mode %q (want Kubernetes or JSON)", p.Mode)
	}
	p.Actions = c.Actions(spec.ValidationActions())
	p.FailurePolicyIgnore = c.FailurePolicy(spec.FailurePolicy)
	if p.Mode == ModeKubernetes {
		c.MatchConstraints(spec.MatchConstraints)
	}
	c.checkRequired(spec)

	env, err := kyvernocel.NewEnv(p.Namespace())
	if err != nil {
		c.Wrap("spec", err)
		return p
	}
	p.variants = append(p.variants, c.variant(env, spec, p.Mode, "", nil, ""))
	if len(c.Errs) > 0 {
		// The variants would repeat the policy's problems.
		return p
	}
	gen, err := autogen(spec)
	if err != nil {
		c.Wrap("spec.autogen", err)
	}
	for _, g := range gen {
		p.variants = append(p.variants, c.variant(env, g.spec, p.Mode, g.config, g.targets, "autogen["+g.config+"]."))
	}
	return p
}

// checkRequired reports the fields the CRD requires that the schema check
// of decoding does not (it checks types only).
func (c *compiler) checkRequired(spec *policiesv1.ValidatingPolicySpec) {
	need := func(missing bool, path string, i int, message string) {
		if missing {
			c.errorf(engine.CodeInvalidPolicy, fmt.Sprintf(path, i), "%s", message)
		}
	}
	for i, v := range spec.Validations {
		need(v.Expression == "", "spec.validations[%d].expression", i, "a validation needs an expression")
	}
	for i, m := range spec.MatchConditions {
		need(m.Name == "", "spec.matchConditions[%d].name", i, "a match condition needs a name")
		need(m.Expression == "", "spec.matchConditions[%d].expression", i, "a match condition needs an expression")
	}
	for i, v := range spec.Variables {
		need(v.Name == "", "spec.variables[%d].name", i, "a variable needs a name")
		need(v.Expression == "", "spec.variables[%d].expression", i, "a variable needs an expression")
	}
	for i, a := range spec.AuditAnnotations {
		need(a.Key == "", "spec.auditAnnotations[%d].key", i, "an audit annotation needs a key")
		need(a.ValueExpression == "", "spec.auditAnnotations[%d].valueExpression", i, "an audit annotation needs a valueExpression")
	}
}

// variant compiles one spec as Kyverno's vpol compiler does: match
// conditions, variables (each registered with its type for the
// expressions after it), validations (bool, messageExpression string) and
// audit annotations (string or null).
func (c *compiler) variant(env *kyvernocel.Env, spec *policiesv1.ValidatingPolicySpec, mode, config string, targets []Target, prefix string) *Variant {
	v := &Variant{Autogen: config, Targets: targets, spec: spec}
	if mode != ModeJSON {
		v.match = compileMatcher(spec.MatchConstraints)
	}
	for i, m := range spec.MatchConditions {
		path := fmt.Sprintf("%sspec.matchConditions[%d].expression", prefix, i)
		v.matchConditions = append(v.matchConditions, c.compile(env, m.Name, m.Expression, path, cel.BoolType).prog)
	}
	names := make([]string, len(spec.Variables))
	for i, vr := range spec.Variables {
		path := fmt.Sprintf("%sspec.variables[%d].expression", prefix, i)
		e, t := c.compileTyped(env, vr.Name, vr.Expression, path)
		env.RegisterVariable(vr.Name, t)
		v.variables = append(v.variables, e)
		names[i] = vr.Name
	}
	v.varNames = kyvernocel.NewVariableNames(names)
	for i, val := range spec.Validations {
		path := fmt.Sprintf("%sspec.validations[%d]", prefix, i)
		cv := &validation{expr: *c.compile(env, "", val.Expression, path+".expression", cel.BoolType), message: val.Message}
		if val.MessageExpression != "" {
			cv.messageExpr = c.compile(env, "", val.MessageExpression, path+".messageExpression", cel.StringType).prog
		}
		v.validations = append(v.validations, cv)
	}
	for i, a := range spec.AuditAnnotations {
		path := fmt.Sprintf("%sspec.auditAnnotations[%d].valueExpression", prefix, i)
		v.auditAnnots.Add(a.Key, c.compile(env, a.Key, a.ValueExpression, path, cel.StringType, cel.NullType).prog)
	}
	return v
}

func (c *compiler) compile(env *kyvernocel.Env, name, text, path string, want ...*cel.Type) *expr {
	e, _ := c.compileTyped(env, name, text, path, want...)
	return e
}

// compileTyped compiles an expression and returns its type (dyn when it
// does not compile, so that the expressions that use a variable report
// their own problems only).
func (c *compiler) compileTyped(env *kyvernocel.Env, name, text, path string, want ...*cel.Type) (*expr, *cel.Type) {
	e := &expr{name: name, path: path}
	if text == "" {
		return e, cel.DynType // reported by checkRequired
	}
	prog, t, err := CompileExpression(env, text, path, want...)
	if err != nil {
		c.Errs = append(c.Errs, err)
	}
	e.prog = prog
	return e, t
}

// CompileExpression compiles one expression of a policy of the group in
// env, as Compile does: its type must be one of want (any type when want
// is empty); a problem is an *engine.Error with Code
// engine.CodeInvalidPolicy at path. It returns the program and its type
// (dyn when it does not compile).
func CompileExpression(env *kyvernocel.Env, text, path string, want ...*cel.Type) (cel.Program, *cel.Type, *engine.Error) {
	prog, t, err := env.Compile(text, want...)
	if err != nil {
		return nil, cel.DynType, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path, Message: err.Error(), Err: err}
	}
	return prog, t, nil
}

func hashOf(doc *Document) string {
	return Hash(doc.Kind, doc.Metadata.Name, doc.Metadata.Namespace, doc.Metadata.Annotations, &doc.Spec)
}

// Hash is the SHA-256 of a policy's kind, name, namespace, annotations and
// spec (JSON), hex encoded: Policy.Hash, and the hash of the group's other
// kinds.
func Hash(kind, name, namespace string, annotations map[string]string, spec any) string {
	b, err := json.Marshal(struct {
		Kind, Name, Namespace string
		Annotations           map[string]string
		Spec                  any
	}{kind, name, namespace, annotations, spec})
	if err != nil {
		b = []byte(kind + "/" + namespace + "/" + name)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
