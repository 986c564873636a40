package mpol

import (
	"context"
	"fmt"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/internal/celtypes"
	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// The messages of a MutatingAdmissionPolicy's results, as Kyverno's CLI
// words them (pkg/admissionpolicy).
const (
	MessageAdmissionApplied = "mutation is successfully applied"
	MessageAdmissionSkipped = "match conditions aren't met"
)

// AdmissionPolicy is a compiled MutatingAdmissionPolicy with its bindings.
// It is immutable and safe for concurrent use.
type AdmissionPolicy struct {
	doc *AdmissionPolicyDocument
	// Name is metadata.name; Hash the SHA-256 of the policy and its
	// bindings (vpol.Hash).
	Name, Hash string

	match      *vpol.Matcher
	bindings   []*admissionBinding
	hasParams  bool
	conditions matchconditions.Matcher
	mutations  []*admissionMutation
}

type admissionBinding struct {
	doc   *BindingDocument
	match *vpol.Matcher // nil without matchResources
}

type admissionMutation struct {
	patchType string
	path      string
	eval      plugincel.MutatingEvaluator
}

// Document returns the policy as written. Callers must not modify it.
func (p *AdmissionPolicy) Document() *AdmissionPolicyDocument { return p.doc }

// The accessors of a mutation's expression, with the type Kubernetes
// checks it against.
type (
	jsonPatchExpression   string
	applyConfigExpression string
)

func (e jsonPatchExpression) GetExpression() string { return string(e) }
func (e jsonPatchExpression) ReturnTypes() []*cel.Type {
	return []*cel.Type{cel.ListType(kyvernocel.JSONPatchType)}
}
func (e applyConfigExpression) GetExpression() string    { return string(e) }
func (e applyConfigExpression) ReturnTypes() []*cel.Type { return []*cel.Type{kyvernocel.ObjectType} }

// variable is a spec.variables entry.
type variable admissionregistrationv1.Variable

func (v variable) GetExpression() string    { return v.Expression }
func (v variable) ReturnTypes() []*cel.Type { return []*cel.Type{cel.AnyType} }
func (v variable) GetName() string          { return v.Name }

// CompileAdmissionPolicy compiles a MutatingAdmissionPolicy and the
// bindings that name it (the others are ignored) in Kubernetes' CEL
// environment for mutating admission policies (the base environment with
// Kyverno's orValue compatibility, as Kyverno's CLI builds it): variables,
// match conditions and mutations, with params when the policy has a
// paramKind. A problem is an engine.Error with the field path.
func CompileAdmissionPolicy(doc *AdmissionPolicyDocument, bindings []*BindingDocument) (*AdmissionPolicy, error) {
	var errs engine.Errors
	invalid := func(path string, err error) {
		errs = append(errs, &engine.Error{Code: engine.CodeInvalidPolicy, Path: path, Message: err.Error(), Err: err})
	}
	spec := &doc.Spec
	p := &AdmissionPolicy{doc: doc, Name: doc.Metadata.Name, hasParams: spec.ParamKind != nil, match: vpol.CompileMatcher(spec.MatchConstraints)}
	hashed := []any{&doc.Spec}
	for _, b := range bindings {
		if b.Spec.PolicyName != p.Name {
			continue
		}
		ab := &admissionBinding{doc: b}
		if b.Spec.MatchResources != nil {
			ab.match = vpol.CompileMatcher(b.Spec.MatchResources)
		}
		p.bindings = append(p.bindings, ab)
		hashed = append(hashed, b.Metadata.Name, &b.Spec)
	}
	p.Hash = vpol.Hash(doc.Kind, doc.Metadata.Name, "", doc.Metadata.Annotations, hashed)
	if p.Name == "" {
		invalid("metadata.name", fmt.Errorf("a policy needs a name"))
	}
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        celtypes.OrValueCompat(),
	})
	if err == nil {
		var compiler *plugincel.CompositedCompiler
		if compiler, err = plugincel.NewCompositedCompiler(env); err == nil {
			p.compile(compiler, invalid)
		}
	}
	if err != nil {
		invalid("spec", err)
	}
	if err := errs.Err(); err != nil {
		return nil, fmt.Errorf("compile %s %q: %w", doc.Kind, doc.Metadata.Name, err)
	}
	return p, nil
}

func (p *AdmissionPolicy) compile(c *plugincel.CompositedCompiler, invalid func(string, error)) {
	spec := &p.doc.Spec
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.hasParams, HasPatchTypes: true}
	for i, v := range spec.Variables {
		if r := c.CompileAndStoreVariable(variable(v), opts, environment.StoredExpressions); r.Error != nil {
			invalid(fmt.Sprintf("spec.variables[%d].expression", i), r.Error)
		}
	}
	conds := make([]plugincel.ExpressionAccessor, len(spec.MatchConditions))
	for i, m := range spec.MatchConditions {
		mc := &matchconditions.MatchCondition{Name: m.Name, Expression: m.Expression}
		conds[i] = mc
		if r := c.CompileCELExpression(mc, opts, environment.StoredExpressions); r.Error != nil {
			invalid(fmt.Sprintf("spec.matchConditions[%d].expression", i), r.Error)
		}
	}
	failPolicy := admissionregistrationv1.Fail
	if spec.FailurePolicy != nil {
		failPolicy = *spec.FailurePolicy
	}
	matchPolicy := admissionregistrationv1.Equivalent
	if mc := spec.MatchConstraints; mc != nil && mc.MatchPolicy != nil {
		matchPolicy = *mc.MatchPolicy
	}
	p.conditions = matchconditions.NewMatcher(c.CompileCondition(conds, opts, environment.StoredExpressions), &failPolicy, "policy", string(matchPolicy), p.Name)
	for i, m := range spec.Mutations {
		var acc plugincel.ExpressionAccessor
		mu := &admissionMutation{patchType: string(m.PatchType)}
		switch {
		case mu.patchType == PatchTypeJSONPatch && m.JSONPatch != nil:
			acc, mu.path = jsonPatchExpression(m.JSONPatch.Expression), fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i)
		case mu.patchType == PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			acc, mu.path = applyConfigExpression(m.ApplyConfiguration.Expression), fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i)
		default:
			invalid(fmt.Sprintf("spec.mutations[%d].patchType", i), fmt.Errorf("a %q mutation needs its expression (want ApplyConfiguration or JSONPatch)", m.PatchType))
			continue
		}
		mu.eval = c.CompileMutatingEvaluator(acc, opts, environment.StoredExpressions)
		for _, err := range mu.eval.CompilationErrors() {
			invalid(mu.path, err)
		}
		p.mutations = append(p.mutations, mu)
	}
}

// AdmissionRequest is what a MutatingAdmissionPolicy is evaluated on.
type AdmissionRequest struct {
	// In is the request as vpol prepares it, for the constraints.
	In *vpol.Input
	// Object is the object as the mutations before this policy left it;
	// OldObject its previous state (nil on CREATE).
	Object, OldObject map[string]any
	// Kind, Resource, Subresource, Namespace, Name, Operation, DryRun
	// and UserInfo describe the request.
	Kind            schema.GroupVersionKind
	Resource        string
	Subresource     string
	Namespace, Name string
	Operation       string
	DryRun          bool
	UserInfo        vpol.UserInfo
	NamespaceLabels map[string]string
	// Params reads the params of the paramRef of the named binding.
	Params func(binding string, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef) ([]map[string]any, error)
}

// Evaluate runs the policy as Kyverno's CLI does (pkg/admissionpolicy):
// without bindings, once when its matchConstraints match; with bindings,
// once per binding whose matchResources match (a binding without them
// always does, as in Kyverno's CLI), with the params of its paramRef,
// each on the object the one before it mutated. The result is the last
// run's (rule: the policy's name): skip when a match condition does not
// hold, pass when the mutations applied; nil when nothing ran. Where
// Kyverno's CLI drops the response of a failure (a match condition or a
// mutation that errs, params it cannot find), the result is an error
// naming the field. The object is the object after the policy.
func (p *AdmissionPolicy) Evaluate(ctx context.Context, r *AdmissionRequest) (*Result, map[string]any) {
	obj := r.Object
	if len(p.bindings) == 0 {
		ok, err := p.match.Matches(r.In)
		if err != nil {
			return p.failure("spec.matchConstraints", fmt.Errorf("failed to execute matching: %w", err)), obj
		}
		if !ok {
			return nil, obj
		}
		return p.run(ctx, r, obj, nil)
	}
	var last *Result
	for i, b := range p.bindings {
		if b.match != nil {
			ok, err := b.match.Matches(r.In)
			if err != nil {
				last = p.failure(fmt.Sprintf("bindings[%d].spec.matchResources", i), fmt.Errorf("failed to execute matching: %w", err))
				continue
			}
			if !ok {
				continue
			}
		}
		var params runtime.Object
		if ref := b.doc.Spec.ParamRef; ref != nil {
			found, err := r.Params(b.doc.Metadata.Name, p.doc.Spec.ParamKind, ref)
			if err != nil {
				last = p.failure(fmt.Sprintf("bindings[%d].spec.paramRef", i), err)
				continue
			}
			params = paramsObject(found, ref.Selector != nil)
		}
		res, patched := p.run(ctx, r, obj, params)
		last, obj = res, patched
	}
	return last, obj
}

// paramsObject is the params variable: the first param, or with a
// selector the list of them (as Kyverno's CLI gives them).
func paramsObject(found []map[string]any, selector bool) runtime.Object {
	switch {
	case len(found) == 0:
		return nil
	case !selector:
		return &unstructured.Unstructured{Object: found[0]}
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range found {
		list.Items = append(list.Items, unstructured.Unstructured{Object: o})
	}
	return list
}

func (p *AdmissionPolicy) failure(path string, err error) *Result {
	return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusError, Message: err.Error()}, Path: path}
}

// run is Kyverno's mutateResource: the match conditions, then each
// mutation on the previous one's output, through Kubernetes' evaluators;
// an ApplyConfiguration is merged with the deduced type of the object
// (every list atomic), as Kyverno's CLI merges those of mutating
// admission policies.
func (p *AdmissionPolicy) run(ctx context.Context, r *AdmissionRequest, obj map[string]any, params runtime.Object) (*Result, map[string]any) {
	u := &unstructured.Unstructured{Object: obj}
	var old runtime.Object
	if r.OldObject != nil {
		old = &unstructured.Unstructured{Object: r.OldObject}
	}
	info := &user.DefaultInfo{Name: r.UserInfo.Username, UID: r.UserInfo.UID, Groups: r.UserInfo.Groups, Extra: r.UserInfo.Extra}
	gvr := r.Kind.GroupVersion().WithResource(r.Resource)
	attr := admission.NewAttributesRecord(u, old, r.Kind, r.Namespace, r.Name, gvr, r.Subresource, admission.Operation(r.Operation), nil, r.DryRun, info)
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: r.Kind, VersionedObject: u, VersionedOldObject: old}
	res := p.conditions.Match(ctx, va, nil, nil)
	switch {
	case res.Error != nil:
		return p.failure("spec.matchConditions", res.Error), obj
	case !res.Matches:
		return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusSkip, Message: MessageAdmissionSkipped}}, obj
	}
	ns := namespaceOf(r)
	request := plugincel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(r.Kind))
	cur := obj
	for _, m := range p.mutations {
		out, _, err := m.eval.ForInput(ctx, va, request, plugincel.OptionalVariableBindings{VersionedParams: params}, ns, celconfig.RuntimeCELCostBudget)
		if err == nil {
			err = out.Error
		}
		var patched map[string]any
		if err == nil {
			if m.patchType == PatchTypeJSONPatch {
				patched, err = applyJSONPatch(out.EvalResult, cur)
			} else {
				patched, err = applyObject(out.EvalResult, cur, deducedType, false)
			}
		}
		if err != nil {
			return p.failure(m.path, err), obj
		}
		cur = patched
		va.Dirty, va.VersionedObject = true, &unstructured.Unstructured{Object: cur}
	}
	return &Result{Result: vpol.Result{Rule: p.Name, Status: vpol.StatusPass, Message: MessageAdmissionApplied}}, cur
}

// deducedType is the type Kubernetes deduces for an object without a
// schema: maps merged by key, lists atomic.
func deducedType(map[string]any) (*typed.ParseableType, error) {
	return &typed.DeducedParseableType, nil
}

// namespaceOf is the namespaceObject of the request: the Namespace with
// the request's namespace labels, as Kyverno's CLI builds it (nil for a
// cluster-scoped resource and for a Namespace).
func namespaceOf(r *AdmissionRequest) *corev1.Namespace {
	if r.Namespace == "" || r.Kind.Group == "" && r.Kind.Kind == "Namespace" {
		return nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace, Labels: r.NamespaceLabels}}
}
